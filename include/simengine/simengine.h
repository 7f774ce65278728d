/* simengine: public API umbrella header. */
#ifndef SIMENGINE_H
#define SIMENGINE_H
#include "simengine/error.h"
#include "simengine/neurons.h"
#endif
