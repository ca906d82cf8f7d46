#ifndef CPROCESSSIGNALS_H
#define CPROCESSSIGNALS_H

#include <stdbool.h>

/// `camo-agent run` must turn SIGTERM and SIGINT into a graceful shutdown at any moment, even 50 ms after exec,
/// before Swift has set up anything. A constructor in this library installs a handler for both before main()
/// runs, when the first argument is "run" (or an option, or nothing: run is the default subcommand). The handler
/// only writes the signal's number to a pipe (async-signal-safe); camo_signals_wait() reads it. Any other
/// subcommand keeps the default handling (Ctrl-C ends it).

/// Whether the constructor installed the handlers.
bool camo_signals_installed(void);

/// Waits for SIGTERM or SIGINT and returns its number; a signal that came before the call is returned at once.
/// Call it on a thread of its own.
int camo_signals_wait(void);

#endif
