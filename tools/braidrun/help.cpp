#include "help.hpp"

#ifndef BRAIDRUN_VERSION
#error "BRAIDRUN_VERSION must be defined by the build"
#endif

namespace braidrun {

std::string_view usage_line() {
  return "Usage: braidrun -n N [--transport T] [--timeout S] [--tag-output] [--] program "
         "[args...]\n";
}

std::string_view help_text() {
  return R"(Usage: braidrun -n N [--transport T] [--timeout S] [--tag-output] [--] program [args...]

Start N processes ("ranks") of program on this machine as one braid job and supervise them.

Options:
  -n N, -np N     Number of ranks to start, an integer from 1 to 4096. Required.
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
  --              End of braidrun's options: what follows is the program and its
                  arguments, even if it starts with '-'.
  -h, --help      Print this help and exit.
  --version       Print the version and exit.

The program is looked up in PATH as a shell would. Everything after the program name is
passed to it untouched. Long options also accept the form --option=value.

Environment of each rank: braidrun's own environment, plus
  BRAID_RANK=i                    this rank, 0 .. N-1
  BRAID_SIZE=N                    number of ranks in the job
  BRAID_LOCAL_RANK=i              rank among the ranks on this machine (= BRAID_RANK,
                                  since braidrun starts every rank locally)
  BRAID_LOCAL_SIZE=N              number of ranks on this machine (= BRAID_SIZE)
  BRAID_BOOTSTRAP=127.0.0.1:PORT  where rank 0 listens and the other ranks connect;
                                  braidrun picks a TCP port that was free at start-up
  BRAID_JOB_KEY=KEY               32 random hex digits, the same for every rank of a
                                  job and different for every job
  BRAID_TRANSPORT=T               only with --transport
  BRAID_TIMEOUT=S                 only with --timeout
Variables of these names in braidrun's environment are replaced.

Supervision:
  If a rank is killed by a signal or exits with a non-zero status, braidrun reports it
  on stderr, e.g.
    braidrun: rank 2 (pid 12345) killed by signal 9 (Killed)
    braidrun: rank 1 (pid 12346) exited with code 3
  then sends SIGTERM to the ranks still running and SIGKILL to those still running 3 s
  later. Ranks ending because of this shutdown are listed on one follow-up line.
  SIGINT and SIGTERM sent to braidrun are forwarded to every running rank; ranks still
  running 5 s later are killed with SIGKILL.
  Each rank runs in its own process group and signals are sent to the whole group, so
  processes a rank started itself (e.g. from a wrapper script) are stopped with it. As
  a consequence ranks must not read from a terminal. Ranks are killed with SIGKILL if
  braidrun itself dies.

Exit status:
  0        every rank exited with status 0
  C        the first rank to fail exited with code C
  128+S    the first rank to fail was killed by signal S
  1        braidrun itself failed (for example, fork failed)
  2        usage error
  126      the program was found but could not be executed
  127      the program was not found
)";
}

std::string version_line() {
  return std::string("braidrun (braid) ") + BRAIDRUN_VERSION + "\n";
}

}  // namespace braidrun
