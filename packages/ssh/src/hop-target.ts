/** One resolved hop of an SSH connection (a ProxyJump host or the target). */
export interface HopTarget {
  /** As named (alias or spec). */
  name: string;
  hostName: string;
  port: number;
  username: string;
  /** The name known_hosts uses (HostKeyAlias or HostName). */
  knownHostsHost: string;
  identityFiles: string[];
  knownHostsWrite: string;
  knownHostsRead: string[];
  hashKnownHosts: boolean;
  jumpHost: boolean;
}
