// Linux calls Swift's Glibc module leaves out: glibc declares them only under _GNU_SOURCE.

// renameat2(2), glibc 2.28 and later.
int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

// Swaps the two names atomically (both must exist).
#define FRAMESCOPE_RENAME_EXCHANGE (1 << 1)
