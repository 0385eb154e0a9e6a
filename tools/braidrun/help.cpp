#include "help.hpp"

#ifndef BRAIDRUN_VERSION
#error "BRAIDRUN_VERSION must be defined by the build"
#endif

namespace braidrun {

std::string_view usage_line() {
  return "Usage: braidrun -n N [--host H:S,... | --hostfile F] [--launch-agent CMD] [--transport T]"
         "\n                [--timeout S] [--tag-output] [--bind-to none|core|numa] [--map-by "
         "core|numa]"
         "\n                [--report-bindings] [--] program [args...]\n";
}

std::string_view help_text() {
  return R"(Usage: braidrun -n N [--host H:S,... | --hostfile F] [--launch-agent CMD] [--transport T]
                [--timeout S] [--tag-output] [--bind-to none|core|numa] [--map-by core|numa]
                [--report-bindings] [--] program [args...]

Start N processes ("ranks") of program as one braid job, on this machine or on the hosts
given, and supervise them.

Options:
  -n N, -np N     Number of ranks to start, an integer from 1 to 4096. Required unless
                  --host or --hostfile is given; then it defaults to the number of slots.
  --host LIST, -H LIST
                  Hosts to run on, "h1:2,h2:2": a host name and its slots (default 1),
                  comma-separated. Ranks fill the slots in order: ranks 0 and 1 on h1,
                  2 and 3 on h2. A host named twice gets the sum of its slots.
  --hostfile F    The same from a file: one host per line, "h1 slots=2"; "#" starts a
                  comment. Cannot be combined with --host.
  --launch-agent CMD
                  How ranks are started on other hosts (default: ssh), called as
                    CMD <host> env BRAID_RANK=... UCX_...=... <program> <args...>
                  like Open MPI's rsh agent. CMD is split at blanks ("ssh -p 2222"). The
                  agent must run the command through a shell on the host, as ssh does:
                  words a shell would split or expand are single-quoted. The BRAID_* and
                  UCX_* variables of each rank are passed this way; the rest of a remote
                  rank's environment is the host's. Remote ranks start in the agent's
                  working directory (the home directory, for ssh): give the program as an
                  absolute path. Hosts named localhost or like this machine are started
                  directly.
  --transport T   Transport the ranks should use: auto, ucx or verbs. Exported to every
                  rank as BRAID_TRANSPORT=T. Without it, BRAID_TRANSPORT is passed on
                  only if braidrun's own environment has it.
  --timeout S     Timeout for braid operations in seconds, a positive number that may be
                  fractional (for example 30 or 2.5). Exported as BRAID_TIMEOUT=S.
  --tag-output    Prefix every line a rank writes with "[rank] ", e.g. "[1] hello". Each
                  rank's stdout and stderr are read through pipes and written to
                  braidrun's stdout and stderr respectively, whole lines at a time, so
                  lines of different ranks never mix. A last line without a newline is
                  written with one when the rank closes the stream; a line longer than
                  64 KiB is split. Without --tag-output the ranks write directly to
                  braidrun's stdout and stderr.
  --bind-to none|core|numa
                  What each rank on this machine is bound to (CPU affinity set before
                  the program starts). Default: core when the machine has at least as
                  many cores as local ranks, else none. With numa, local rank i runs on
                  the CPUs of NUMA node i mod (nodes with CPUs), and braid puts its
                  buffers there. Ranks started through the launch agent are not bound.
  --map-by core|numa
                  How ranks are laid out: core fills consecutive cores; numa goes
                  round-robin over NUMA nodes, then over each node's cores. Default:
                  numa with --bind-to numa, else core.
  --report-bindings
                  Print each rank's CPU list, cpuset and NUMA node to stderr before
                  starting it. The machine's topology comes from hwloc (HWLOC_XMLFILE
                  replays a saved one).
  --              End of braidrun's options: what follows is the program and its
                  arguments, even if it starts with '-'.
  -h, --help      Print this help and exit.
  --version       Print the version and exit.

The program is looked up in PATH as a shell would. Everything after the program name is
passed to it untouched. Long options also accept the form --option=value.

Environment of each rank: braidrun's own environment (for ranks on other hosts: only its
BRAID_* and UCX_* variables), plus
  BRAID_RANK=i                    this rank, 0 .. N-1
  BRAID_SIZE=N                    number of ranks in the job
  BRAID_LOCAL_RANK=i              rank among the ranks on the same host
  BRAID_LOCAL_SIZE=N              number of ranks on the same host
  BRAID_BOOTSTRAP=127.0.0.1:PORT  jobs on this machine only: where rank 0 listens and the
                                  other ranks connect; braidrun picks a TCP port that
                                  was free at start-up
  BRAID_RENDEZVOUS=ADDR:PORT,...  jobs across hosts, instead of BRAID_BOOTSTRAP: braidrun
                                  listens there; rank 0 registers the address it listens
                                  on (a port its kernel picks) and the others ask for it
  BRAID_JOB_KEY=KEY               32 random hex digits, the same for every rank of a
                                  job and different for every job
  BRAID_TRANSPORT=T               only with --transport
  BRAID_TIMEOUT=S                 only with --timeout
Variables of these names in braidrun's environment are replaced.

Addresses: across hosts, braidrun's rendezvous service and rank 0 each publish the
addresses of the interfaces chosen by BRAID_SOCKET_IFNAME (name prefixes, "eth,ib";
"^docker,lo" excludes; "=eth0" exact names) or, when it is unset, of every interface but
loopback and container bridges (docker0, br-*, virbr*, ...). A rank uses the first address
it can reach. With BRAID_DEBUG=info braidrun prints the addresses it chose and why.

Other launchers: the same program runs unchanged under Open MPI's mpirun and under Slurm's
srun --mpi=pmix; braid then learns its rank, size and local rank from PMIx.

Supervision:
  If a rank is killed by a signal or exits with a non-zero status, braidrun reports it
  on stderr, e.g.
    braidrun: rank 2 (pid 12345) killed by signal 9 (Killed)
    braidrun: rank 1 (pid 12346) exited with code 3
    braidrun: rank 3 (pid 12347, h2 via ssh) exited with code 1
  then sends SIGTERM to the ranks still running and SIGKILL to those still running 3 s
  later. Ranks ending because of this shutdown are listed on one follow-up line.
  SIGINT, SIGTERM and SIGQUIT sent to braidrun are forwarded to every running rank, and
  SIGHUP sends them SIGTERM; ranks still running 5 s later are killed with SIGKILL.
  SIGUSR1 and SIGUSR2 are passed on to every rank running here (not to launch agents,
  which ssh would end) and the job goes on.
  Each rank runs in a session and process group of its own and signals are sent to the
  whole group, so processes a rank started itself (e.g. from a wrapper script) are
  stopped with it; what a rank leaves running in its group when it exits is sent SIGTERM
  (then SIGKILL) once every rank has exited. Ranks have no controlling terminal: opening
  /dev/tty fails (so an ssh agent cannot prompt for a password). Ctrl-Z (SIGTSTP) stops
  braidrun and the ranks here when braidrun is a terminal's foreground job, and
  continuing braidrun (fg, bg) continues them. If braidrun itself dies, even
  by SIGKILL, every rank's process group is killed with SIGKILL. Processes still there
  10 s after SIGKILL (stuck in the kernel) are reported, and braidrun exits 1.
  A rank on another host is its launch agent's process here: the agent's exit status is
  the rank's, and signals go to the agent. A signal ends ssh itself; the remote rank then
  notices only when its connection back breaks (when it writes output), so use an agent
  that forwards signals if ranks must see them. braidrun's standard input goes to rank 0
  (when it runs here) unless it is a terminal (redirect input from a file or a pipe); the
  other ranks and the agents read /dev/null.

Exit status:
  0        every rank exited with status 0
  C        the first rank to fail exited with code C
  128+S    the first rank to fail was killed by signal S
  1        braidrun itself failed (for example, fork failed, or the ranks do not fit
           the hosts' slots)
  2        usage error
  126      the program (or launch agent) was found but could not be executed
  127      the program (or launch agent) was not found
)";
}

std::string version_line() {
  return std::string("braidrun (braid) ") + BRAIDRUN_VERSION + "\n";
}

}  // namespace braidrun
