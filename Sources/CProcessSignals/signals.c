#define _GNU_SOURCE
#include "CProcessSignals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static bool installed = false;
static int pipe_fds[2] = {-1, -1};

static void on_signal(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    // A full pipe (hundreds of signals not yet read) loses the extra ones: one is enough.
    (void)!write(pipe_fds[1], &byte, 1);
    errno = saved;
}

static bool runs_the_agent(int argc, char **argv) {
    if (argc < 2) return true;
    const char *first = argv[1];
    if (strcmp(first, "run") == 0) return true;
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 || strcmp(first, "--version") == 0) return false;
    return first[0] == '-';
}

// glibc passes argc, argv and envp to constructors.
__attribute__((constructor)) static void camo_signals_constructor(int argc, char **argv, char **envp) {
    (void)envp;
    if (!runs_the_agent(argc, argv)) return;
    // Started with a standard descriptor closed (`camo-agent run >&-`), the pipe would take its number and
    // whatever the program writes there would read as signals: fill 0-2 with /dev/null first.
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            int null_fd = open("/dev/null", O_RDWR);
            if (null_fd >= 0 && null_fd != fd) close(null_fd);
        }
    }
    if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) return;
    // The read end blocks; only the handler's write end must never block.
    fcntl(pipe_fds[0], F_SETFL, fcntl(pipe_fds[0], F_GETFL) & ~O_NONBLOCK);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGTERM, &action, NULL) == 0 && sigaction(SIGINT, &action, NULL) == 0) installed = true;
}

bool camo_signals_installed(void) { return installed; }

int camo_signals_wait(void) {
    unsigned char byte = 0;
    for (;;) {
        ssize_t count = read(pipe_fds[0], &byte, 1);
        if (count == 1 && (byte == SIGTERM || byte == SIGINT)) return byte;
        if (count == 1) continue;
        if (count < 0 && errno == EINTR) continue;
        // The pipe cannot close while the process runs; wait forever rather than spin.
        pause();
    }
}
