// Thin shim over ALSA's <alsa/asoundlib.h>.
#ifndef CAMO_CALSA_SHIM_H
#define CAMO_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
