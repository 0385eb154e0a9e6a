# shellcheck shell=bash disable=SC1091
# Stage 2 of the test guest, run by guest-init in the host's root (9p + tmpfs overlay): loads
# the soft-RoCE modules, creates rxe0 on an Ethernet device, waits for the port and its IPv4
# RoCEv2 GID, then runs the command with its output in the control share. /run/guest/config.sh
# holds the run's settings (written by run-in-guest).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
C=/run/guest
log()  { read -r up _ < /proc/uptime; echo "[guest $up] $*" > /dev/console; }
fail() { log "FATAL: $*"; echo "$*" > $C/error; exit 1; }
. $C/config.sh   # GUEST_WORKDIR GUEST_NODE GUEST_IP GUEST_PEER_IP GUEST_NIC GUEST_WAIT_GO GUEST_CMD
hostname "rxe-node$GUEST_NODE" 2>/dev/null || true
# The RTC has whole-second resolution: take the host's time from the mtime of a new file in
# the 9p control share.
: > $C/clock && date -s "@$(stat -c %.9Y $C/clock)" >/dev/null 2>&1 || true

# No udev in the guest: the NIC driver is loaded by name.
nicmod=dummy; [[ $GUEST_NIC == virtio ]] && nicmod=virtio_net
modprobe -a $nicmod rdma_rxe ib_uverbs rdma_ucm || fail "modprobe $nicmod rdma_rxe ib_uverbs rdma_ucm failed"
modprobe ib_umad 2>/dev/null || true

# Single guest: a dummy netdev (rxe loops its own traffic back). Pair: the virtio NIC whose
# qemu backend sends its frames to the other guest's qemu over UDP on the host's loopback.
# 192.0.2.0/24 is TEST-NET-1.
ip link set lo up
if [[ $GUEST_NIC == virtio ]]; then
  nic=
  for _ in $(seq 100); do
    for d in /sys/class/net/*; do
      [[ $(readlink -f "$d/device/driver" 2>/dev/null) == */virtio_net ]] && { nic=${d##*/}; break 2; }
    done
    sleep 0.05
  done
  [[ -n $nic ]] || fail "no virtio-net NIC found"
  [[ $nic == eth0 ]] || ip link set "$nic" name eth0 || fail "cannot rename $nic to eth0"
else
  ip link add eth0 type dummy || fail "cannot create the dummy netdev"
fi
# No duplicate address detection: the IPv6 link-local address (UCX's UD wire-up uses its GID)
# would stay tentative for the first seconds after the link comes up, and address handles made
# from it then fail with "Connection timed out".
sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
  net.ipv6.conf.eth0.accept_dad=0 2>/dev/null || true
# MTU 9000 gives rxe an active MTU of 4096 (1500 would give 1024).
ip link set eth0 mtu 9000 && ip link set eth0 up && ip addr add "$GUEST_IP/24" dev eth0 ||
  fail "cannot configure eth0"
# Two guests: the peer's MAC is known (run-in-guest assigns 52:54:00:c0:02:<node+1>), so its
# IPv4 and IPv6 link-local neighbours are entered up front instead of being resolved (and
# possibly timing out) during the first connection right after boot.
if [[ -n $GUEST_PEER_IP ]]; then
  peer_octet=${GUEST_PEER_IP##*.}
  peer_mac=$(printf '52:54:00:c0:02:%02x' "$peer_octet")
  ip neigh replace "$GUEST_PEER_IP" lladdr "$peer_mac" dev eth0 nud permanent || true
  ip neigh replace "fe80::5054:ff:fec0:2$(printf '%02x' "$peer_octet")" lladdr "$peer_mac" \
    dev eth0 nud permanent || true
fi
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 failed"

# rxe does RoCE v2 only; the index of the IPv4-mapped GID is looked up, not assumed.
P=/sys/class/infiniband/rxe0/ports/1
IFS=. read -r a b c d <<< "$GUEST_IP"
want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
gid=
for _ in $(seq 200); do
  if [[ $(cat $P/state 2>/dev/null) == *ACTIVE* ]]; then
    for g in $P/gids/*; do
      i=${g##*/}
      [[ $(cat "$g" 2>/dev/null) == "$want" && $(cat $P/gid_attrs/types/$i 2>/dev/null) == "RoCE v2" ]] &&
        { gid=$i; break 2; }
    done
  fi
  sleep 0.05
done
[[ -n $gid ]] || fail "rxe0 port not ACTIVE or no IPv4 RoCEv2 GID (state: $(cat $P/state 2>/dev/null))"
echo "$GUEST_IP rxe-node$GUEST_NODE" >> /etc/hosts
[[ -n $GUEST_PEER_IP ]] && echo "$GUEST_PEER_IP rxe-node$(( ${GUEST_PEER_IP##*.} - 1 ))" >> /etc/hosts

# The caller's environment, then ours on top.
. $C/env.sh
. $C/config.sh
export RXE_VM=1 RXE_DEV=rxe0 RXE_PORT=1 RXE_NETDEV=eth0 RXE_IP=$GUEST_IP RXE_NODE=$GUEST_NODE
export RXE_GID_INDEX=$gid
if [[ -n $GUEST_PEER_IP ]]; then export RXE_PEER_IP=$GUEST_PEER_IP; else unset RXE_PEER_IP; fi
# UCX 1.13's ud_verbs (UCP's wire-up transport under rc_verbs) times out on rxe with the IPv4
# GID it picks by default and works with the link-local GID 0. The caller's value wins.
export UCX_IB_GID_INDEX=${UCX_IB_GID_INDEX:-0}
ulimit -l unlimited
ulimit -n 65536 2>/dev/null || true
log "rxe0 ACTIVE (gid index $gid); running: ${GUEST_CMD[*]}"
read -r up _ < /proc/uptime; echo "$up" > $C/ready
if [[ $GUEST_WAIT_GO == 1 ]]; then   # pair barrier; the host stops us if "go" never comes
  until [[ -e $C/go ]]; do sleep 0.05; done
fi
cd "$GUEST_WORKDIR" || fail "cannot cd to $GUEST_WORKDIR"
"${GUEST_CMD[@]}" </dev/null >>$C/stdout 2>>$C/stderr
rc=$?
echo "$rc" > $C/rc
sync
