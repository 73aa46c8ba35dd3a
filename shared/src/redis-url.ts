/** The forms REDIS_URL takes: one server, or a Redis Cluster. */

/**
 * REDIS_URL names a Redis Cluster with the schemes `redis+cluster://` (`rediss+cluster://` for
 * TLS) and a comma-separated list of some of its nodes: `redis+cluster://[user:password@]h1:p1,h2:p2`.
 * The client learns the other nodes, and which slots each serves, from the ones listed.
 */
const CLUSTER_URL = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)\/?$/;

export interface ClusterAddress {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

/** The nodes and credentials of a `redis+cluster://` URL, or null for a URL of one server. */
export function parseClusterUrl(url: string): ClusterAddress | null {
  const match = CLUSTER_URL.exec(url);
  if (!match) return null;
  const [, scheme, auth, hosts] = match;
  const nodes = hosts.split(',').map((entry) => {
    const node = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(entry.trim());
    if (!node || Number(node[2]) > 65535) throw new Error(`${entry} is not host:port`);
    return { host: node[1].replace(/^\[|\]$/g, ''), port: Number(node[2]) };
  });
  const [username, password] = auth === undefined ? [] : auth.includes(':') ? auth.split(/:(.*)/s, 2) : [undefined, auth];
  return {
    nodes,
    username: username ? decodeURIComponent(username) : undefined,
    password: password ? decodeURIComponent(password) : undefined,
    tls: scheme === 'rediss',
  };
}

/** Validates REDIS_URL: a `redis://`/`rediss://` URL of one server, or a cluster URL (see parseClusterUrl). */
export function parseRedisUrl(raw: string): string {
  if (/^rediss?\+cluster:/.test(raw)) {
    if (!parseClusterUrl(raw)) throw new Error('must be redis+cluster://[user:password@]host:port,host:port,…');
    return raw;
  }
  const url = new URL(raw);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new Error('must be a redis://, rediss:// or redis+cluster:// URL');
  return url.toString().replace(/\/$/, '');
}
