import { describe, expect, it } from 'vitest';
import { parseClusterUrl, parseRedisUrl } from './redis-url.js';

describe('REDIS_URL', () => {
  it('names one server with redis:// or rediss://', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(parseRedisUrl('rediss://user:secret@redis.example.com:6380/')).toBe('rediss://user:secret@redis.example.com:6380');
    expect(parseClusterUrl('redis://127.0.0.1:6379')).toBeNull();
  });

  it('names a cluster with redis+cluster:// and its nodes, credentials and TLS', () => {
    expect(parseClusterUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001')).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      username: undefined,
      password: undefined,
      tls: false,
    });
    expect(parseClusterUrl('rediss+cluster://app:p%40ss:word@[::1]:7000')).toEqual({
      nodes: [{ host: '::1', port: 7000 }],
      username: 'app',
      password: 'p@ss:word',
      tls: true,
    });
    expect(parseClusterUrl('redis+cluster://:only-a-password@h:1')).toMatchObject({ username: undefined, password: 'only-a-password' });
  });

  it('refuses other schemes and nodes without a port', () => {
    expect(() => parseRedisUrl('http://127.0.0.1:6379')).toThrow(/redis/);
    expect(() => parseRedisUrl('redis+cluster://10.0.0.1,10.0.0.2:7001')).toThrow(/host:port/);
    expect(() => parseRedisUrl('redis+cluster://10.0.0.1:99999')).toThrow(/host:port/);
    expect(() => parseRedisUrl('redis+cluster://')).toThrow(/redis\+cluster/);
  });
});
