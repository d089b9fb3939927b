//===- LlmcInterfaces.cpp - generated interface definitions ---------------===//
#include "ir/LlmcInterfaces.h"

#include "ir/LlmcInterfaces.cpp.inc"
