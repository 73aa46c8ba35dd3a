/**
 * A private Redis Cluster on loopback for one test file: three primaries on free ports, joined,
 * removed by `stop`. The starter itself is scripts/redis-cluster.mjs, which the bench uses too.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PrivateRedisCluster {
  /** REDIS_URL naming the cluster: `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`. */
  url: string;
  ports: number[];
  /** Kills the servers and removes their directory. */
  stop(): Promise<void>;
}

const starter = (await import(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'redis-cluster.mjs'))) as {
  startRedisCluster(nodes?: number): Promise<PrivateRedisCluster>;
};

export const startRedisCluster = (nodes = 3): Promise<PrivateRedisCluster> => starter.startRedisCluster(nodes);
