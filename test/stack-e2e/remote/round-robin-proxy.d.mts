/** Types of round-robin-proxy.mjs: one URL in front of a fleet of replicas, for the stack tests and the fleet's TCK run. */
export interface ProxiedCall {
  /** Index of the replica (in the `upstreams` given) that took the call. */
  replica: number;
  /** The JSON-RPC method and the task it concerns: named by it (params.id, message.taskId), or made by it (its JSON answer's task). */
  method: string;
  taskId: string | undefined;
}

export interface RoundRobinProxy {
  url: string;
  readonly calls: ProxiedCall[];
  /** The replicas' base URLs: set once they run (they are told the proxy's URL as their publicUrl first). */
  upstreams: string[];
  close(): Promise<void>;
}

/** Starts the proxy on loopback, on `port` (0, the default: a free one). */
export function roundRobinProxy(port?: number): Promise<RoundRobinProxy>;
