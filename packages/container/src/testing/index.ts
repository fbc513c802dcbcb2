/**
 * `@conch/container/testing`: a real container engine for integration tests (this package's and the
 * apps'): Podman's Docker-compatible API service on a private socket with its own storage, and a test image
 * built on this machine from its own programs (no registry). Needs root and `podman`. See
 * {@link startPodmanService}.
 */

export { type PodmanService, podmanAvailable, startPodmanService } from './podman.js';
export { TEST_IMAGE_PROGRAMS, testImageTag, testImageTarball } from './test-image.js';
