// Thin shim over libv4l2 and <linux/videodev2.h>: Swift cannot import the
// function-like VIDIOC_* macros or call the variadic v4l2_open/v4l2_ioctl, so
// this header exports them as constants and static inline wrappers.
#ifndef CAMO_CV4L2_SHIM_H
#define CAMO_CV4L2_SHIM_H

#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/videodev2.h>
#include <libv4l2.h>
#include <libv4lconvert.h>

static const unsigned long CAMO_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long CAMO_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long CAMO_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long CAMO_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long CAMO_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long CAMO_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long CAMO_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long CAMO_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long CAMO_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long CAMO_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long CAMO_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long CAMO_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long CAMO_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long CAMO_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long CAMO_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long CAMO_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;
static const unsigned long CAMO_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long CAMO_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long CAMO_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
static const unsigned long CAMO_VIDIOC_G_INPUT = VIDIOC_G_INPUT;
static const unsigned long CAMO_VIDIOC_ENUMINPUT = VIDIOC_ENUMINPUT;

static inline unsigned int camo_v4l2_fourcc(char a, char b, char c, char d) {
    return v4l2_fourcc(a, b, c, d);
}

/// Non-variadic wrapper of v4l2_open (flags only, no mode).
static inline int camo_v4l2_open(const char *path, int flags) {
    return v4l2_open(path, flags);
}

/// Non-variadic wrapper of v4l2_ioctl with a pointer argument.
static inline int camo_v4l2_ioctl(int fd, unsigned long request, void *arg) {
    return v4l2_ioctl(fd, request, arg);
}

/// Non-variadic wrapper of the kernel's ioctl (no libv4l2), for output devices such as v4l2loopback.
static inline int camo_ioctl(int fd, unsigned long request, void *arg) {
    return ioctl(fd, request, arg);
}

/// Opens without libv4l2's format emulation, so only the camera's real formats show.
static inline int camo_v4l2_fd_open_without_conversion(int fd) {
    return v4l2_fd_open(fd, V4L2_DISABLE_CONVERSION);
}

#endif
