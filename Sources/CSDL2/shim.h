// Thin shim over SDL2 (Debian's libsdl2-dev) for camo-studio's live preview window. SDL_MAIN_HANDLED: Swift owns
// main(), SDL must not rename it.
#ifndef CAMO_CSDL2_SHIM_H
#define CAMO_CSDL2_SHIM_H

#define SDL_MAIN_HANDLED 1
#include <SDL2/SDL.h>

#endif
