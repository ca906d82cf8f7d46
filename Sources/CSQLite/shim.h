// SQLite 3 (Debian's libsqlite3-dev): the clip index of the recordings. Swift imports the plain functions as they
// are; the shim only exports what it cannot (SQLITE_TRANSIENT is a cast of -1 to a function pointer, a macro).
#ifndef CAMO_SQLITE_SHIM_H
#define CAMO_SQLITE_SHIM_H

#include <sqlite3.h>

/// sqlite3_bind_text with SQLITE_TRANSIENT: SQLite copies the text before the call returns.
static inline int camo_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text) {
    return sqlite3_bind_text(statement, index, text, -1, SQLITE_TRANSIENT);
}

#endif
