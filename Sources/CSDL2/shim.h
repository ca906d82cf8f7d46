// Thin shim over SDL2 (Debian's libsdl2-dev) for camo-studio's live preview window. SDL_MAIN_HANDLED: Swift owns
// main(), SDL must not rename it.
#ifndef CAMO_CSDL2_SHIM_H
#define CAMO_CSDL2_SHIM_H

#define SDL_MAIN_HANDLED 1
#include <SDL2/SDL.h>

// SDL_WINDOWPOS_CENTERED is a function-like macro (SDL_WINDOWPOS_CENTERED_DISPLAY(0)), which Swift cannot import.
static inline int camo_sdl_windowpos_centered(void) { return SDL_WINDOWPOS_CENTERED; }

#endif
