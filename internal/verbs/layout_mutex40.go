//go:build !arm64

package verbs

// pthreadMutexSize is sizeof(pthread_mutex_t) in glibc on x86-64 (and the
// other 64-bit ports but AArch64).
const pthreadMutexSize = 40
