// Symbol visibility for the public API: only what carries OPTIMIUM_RT_API is exported from the library.
#pragma once

#if defined(_WIN32)
#if defined(OPTIMIUM_RT_BUILDING)
#define OPTIMIUM_RT_API __declspec(dllexport)
#else
#define OPTIMIUM_RT_API __declspec(dllimport)
#endif
#else
#define OPTIMIUM_RT_API __attribute__((visibility("default")))
#endif
