# shellcheck shell=bash disable=SC2034  # sourced; sets variables for the caller
# Functions shared by run-in-guest and run-in-guest-pair (sourced): host packages, the guest
# kernel, the cached initramfs and vmlinux. Everything is cached in $GUEST_CACHE.
# Needs: VM_DIR (this directory), QUIET (0/1), PROG (for messages).

GUEST_CACHE=${BRAID_VM_CACHE:-/var/tmp/braid-vm-cache}
# What the guest needs on the host (its root filesystem IS the host's): qemu, a Debian kernel
# with rdma_rxe, static busybox for the initramfs, and the rdma-core user space + perftest.
GUEST_PACKAGES=(qemu-system-x86 linux-image-amd64 busybox-static kmod cpio gzip xz-utils
                iproute2 rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest)

say() { [[ ${QUIET:-0} == 1 ]] || echo "[$PROG] $*" >&2; }
err() { echo "[$PROG] ERROR: $*" >&2; }

# Installs the missing packages (apt-get update only when the first attempt fails).
# INITRD=No: the kernel's postinst then builds no /boot initrd (the guest uses its own).
guest_packages() {
  local missing=() p
  for p in "${GUEST_PACKAGES[@]}" ${BRAID_VM_EXTRA_PKGS:-}; do
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || missing+=("$p")
  done
  (( ${#missing[@]} )) || return 0
  say "installing: ${missing[*]}"
  mkdir -p "$GUEST_CACHE"
  local install=(env DEBIAN_FRONTEND=noninteractive INITRD=No
                 apt-get install -y -q --no-install-recommends "${missing[@]}")
  exec 8>"$GUEST_CACHE/.apt.lock"; flock 8   # concurrent runs must not fight over dpkg
  if ! "${install[@]}" >"$GUEST_CACHE/apt.log" 2>&1; then
    apt-get update -q >>"$GUEST_CACHE/apt.log" 2>&1
    "${install[@]}" >>"$GUEST_CACHE/apt.log" 2>&1 ||
      { tail -20 "$GUEST_CACHE/apt.log" >&2; err "apt-get install failed (log: $GUEST_CACHE/apt.log)"; return 1; }
  fi
  exec 8>&-
}

# Sets KVER and KERNEL: BRAID_VM_KERNEL, else the newest /boot/vmlinuz-* whose modules have rxe.
guest_kernel() {
  KVER=${BRAID_VM_KERNEL:-}
  if [[ -z $KVER ]]; then
    KVER=$(for d in /lib/modules/*/kernel/drivers/infiniband/sw/rxe; do
             k=${d#/lib/modules/}; k=${k%%/*}
             [[ -r /boot/vmlinuz-$k ]] && echo "$k"
           done 2>/dev/null | sort -V | tail -1)
  fi
  KERNEL=/boot/vmlinuz-$KVER
  [[ -n $KVER && -r $KERNEL ]] || { err "no kernel with rdma_rxe in /boot (install linux-image-amd64)"; return 1; }
}

# Sets INITRD: static busybox, guest-init and the modules needed to reach 9p and the overlay
# (rdma_rxe and the rest are modprobe'd later from the host's /lib/modules, over 9p).
guest_initramfs() {
  local mods=(virtio_pci 9pnet_virtio 9p overlay) bb=/bin/busybox key
  ldd "$bb" >/dev/null 2>&1 && { err "$bb is dynamically linked; install busybox-static"; return 1; }
  key=$({ echo "$KVER ${mods[*]}"; stat -c '%s %Y' "$KERNEL" "$bb"; cat "$VM_DIR/guest-init"; } |
        sha256sum | cut -c1-16)
  INITRD=$GUEST_CACHE/initramfs-$KVER-$key.cpio.gz
  [[ -s $INITRD ]] && return 0
  mkdir -p "$GUEST_CACHE"
  (
    flock 9
    [[ -s $INITRD ]] && exit 0
    say "building $INITRD"
    w=$(mktemp -d "$GUEST_CACHE/build.XXXXXX")
    trap 'rm -rf "$w"' EXIT
    mkdir -p "$w"/{bin,proc,sys,dev,modules}
    cp "$bb" "$w/bin/busybox"
    for a in $("$w/bin/busybox" --list); do
      [[ $a == busybox || $a == init ]] || ln -s busybox "$w/bin/$a"
    done
    modprobe -S "$KVER" -a --show-depends "${mods[@]}" | awk '$1=="insmod" && !seen[$2]++' |
      while read -r _ path args; do
        base=$(basename "$path")
        case $path in
          *.ko)     cp "$path" "$w/modules/$base" ;;
          *.ko.xz)  base=${base%.xz};  xz -dc "$path" > "$w/modules/$base" ;;
          *.ko.zst) base=${base%.zst}; zstd -qdc "$path" > "$w/modules/$base" ;;
        esac
        echo "$base $args" >> "$w/modules.list"
      done
    install -m 755 "$VM_DIR/guest-init" "$w/init"
    (cd "$w" && find . -mindepth 1 | cpio -o -H newc --quiet | gzip -1) > "$INITRD.tmp"
    mv "$INITRD.tmp" "$INITRD"
  ) 9>"$GUEST_CACHE/.build.lock"
  [[ -s $INITRD ]] || { err "could not build the initramfs"; return 1; }
}

# Sets BOOT_IMAGE: the uncompressed vmlinux (extracted once, like the kernel's extract-vmlinux),
# which qemu boots through the PVH entry point; under TCG that saves ~2.5 s of decompression
# per boot. Falls back to the bzImage.
guest_vmlinux() {
  local out
  out=$GUEST_CACHE/vmlinux-$KVER-$(stat -c "%s-%Y" "$KERNEL")
  BOOT_IMAGE=$KERNEL
  if [[ ! -s $out ]]; then
    ( flock 9
      [[ -s $out ]] && exit 0
      # (PCRE escapes, since a shell string cannot hold a NUL byte)
      for m in '\xfd7zXZ\x00:xz -dc --single-stream' '\x1f\x8b\x08\x00:gzip -dc' '\x28\xb5\x2f\xfd:zstd -qdc'; do
        cmd=${m#*:}
        command -v "${cmd%% *}" >/dev/null || continue
        for pos in $(LC_ALL=C grep -obUaP "${m%%:*}" "$KERNEL" | cut -d: -f1); do
          tail -c +$(( pos + 1 )) "$KERNEL" | $cmd > "$out.tmp" 2>/dev/null
          [[ $(head -c 4 "$out.tmp" | od -An -tx1 | tr -d ' ') == 7f454c46 ]] &&
            { mv "$out.tmp" "$out"; exit 0; }
        done
      done
      rm -f "$out.tmp"
    ) 9>"$GUEST_CACHE/.build.lock"
  fi
  [[ -s $out ]] && BOOT_IMAGE=$out
  return 0
}

# Everything a boot needs, idempotent and cheap once cached.
guest_prepare() {
  [[ $EUID == 0 ]] || { err "must run as root (apt-get, /boot, 9p export of /)"; return 1; }
  guest_packages && guest_kernel && guest_initramfs && guest_vmlinux
}

# Sets QACCEL. On these machines /dev/kvm is nested PVM (kvm_pvm), on which a stock kernel
# either aborts (-cpu host) or crawls ~100x slower than TCG, so KVM is used only with
# kvm_intel/kvm_amd and no kvm_pvm. TCG's "max" CPU has AVX2 but no AVX-512.
guest_accel() {
  local accel=${BRAID_VM_ACCEL:-auto}
  if [[ $accel == auto ]]; then
    accel=tcg
    [[ -w /dev/kvm && ! -d /sys/module/kvm_pvm ]] &&
      { [[ -d /sys/module/kvm_intel || -d /sys/module/kvm_amd ]]; } && accel=kvm
  fi
  # shellcheck disable=SC2054  # commas are part of qemu option values
  case $accel in
    kvm) QACCEL=(-accel kvm -cpu host) ;;
    *)   QACCEL=(-accel tcg,thread=multi -cpu max) ;;
  esac
  GUEST_ACCEL=$accel
}
