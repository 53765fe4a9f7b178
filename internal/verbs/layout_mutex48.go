//go:build arm64

package verbs

// pthreadMutexSize is sizeof(pthread_mutex_t) in glibc on AArch64.
const pthreadMutexSize = 48
