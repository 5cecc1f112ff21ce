/* fake_old_driver.c - a stand-in for the NVIDIA driver's libcuda.so.1 that reports CUDA 11.4 and nothing
 * else: the CUDA runtime refuses it as too old (cudaErrorInsufficientDriver), as it would a real old
 * driver. For the test "a driver too old for the build is named as such" (tests/CMakeLists.txt). */
int cuDriverGetVersion(int *version) {
    *version = 11040;
    return 0;
}
int cuInit(unsigned flags) {
    (void)flags;
    return 35; /* CUDA_ERROR_INSUFFICIENT_DRIVER */
}
