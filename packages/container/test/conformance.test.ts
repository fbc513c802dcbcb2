/**
 * The core's driver conformance suite, run against a real container engine (Podman's Docker-compatible
 * service, started by the test on a private socket) in a container created from the test image: the same
 * cases the local and SSH drivers pass. The container's processes run on this machine, so they are counted
 * in its /proc.
 */
import { describeDriverConformance } from '@conch/core/testing';
import { withNodeHost } from '@conch/node/testing';
import { Policy, policyConfigFromFlags } from '@conch/policy';
import { ContainerEngine, locateEngine, type OpenedContainer, openContainer } from '../src/index.js';
import { type PodmanService, startPodmanService } from '../src/testing/index.js';

let podman: PodmanService | undefined;
let opened: OpenedContainer | undefined;

describeDriverConformance(
  'container (dockerode → Podman)',
  withNodeHost({
    kind: 'container',
    driver: async () => {
      podman = await startPodmanService();
      const engine = new ContainerEngine(locateEngine({ address: podman.address, origin: 'flag' }));
      opened = await openContainer(engine, { image: podman.image, name: 'conformance' });
      return opened.driver;
    },
    teardown: async () => {
      await opened?.driver.dispose();
      await podman?.stop();
    },
    denyRm: () => new Policy(policyConfigFromFlags({ deny: ['rm'] })),
  }),
);
