// windows_h.hpp - <windows.h> for the tests' Windows-only code, without its min and max macros (they
// break std::min, std::max and std::numeric_limits<...>::max). Includes nothing elsewhere.
#pragma once

#if defined(_WIN32)
#ifndef NOMINMAX  // MinGW's libstdc++ may have defined it already
#define NOMINMAX
#endif
#include <windows.h>
#endif
