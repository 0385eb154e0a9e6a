// How a rank ended, as waitpid() reports it, turned into the numbers and words braidrun uses.
#pragma once

#include <string>

namespace braidrun {

// True only for exit status 0; a signal or a non-zero code is a failure.
bool is_success(int wait_status);
// The rank's exit code, or 128+signal if it was killed, like a shell's $?.
int exit_status_of(int wait_status);
// "exited with code 3" or "killed by signal 9 (Killed)".
std::string describe(int wait_status);
// "code 3" or "signal 9", for the compact follow-up list of ranks stopped during shutdown.
std::string describe_briefly(int wait_status);

}  // namespace braidrun
