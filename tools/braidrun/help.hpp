// The user-facing texts of braidrun: full --help documentation, the one-line usage shown with
// usage errors, and the --version line.
#pragma once

#include <string>
#include <string_view>

namespace braidrun {

std::string_view usage_line();
std::string_view help_text();
std::string version_line();

}  // namespace braidrun
