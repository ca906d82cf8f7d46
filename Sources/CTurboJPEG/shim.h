// Thin shim over libturbojpeg.
#ifndef CAMO_CTURBOJPEG_SHIM_H
#define CAMO_CTURBOJPEG_SHIM_H
#include <stddef.h>
#include <turbojpeg.h>
#endif
