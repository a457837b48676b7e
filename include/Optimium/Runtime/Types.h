// Element types C++ has no native type for.
#pragma once

#include "Optimium/Runtime/Types/BFloat16.h"
#include "Optimium/Runtime/Types/Float16.h"
