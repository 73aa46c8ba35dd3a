/**
 * Where tests find PostgreSQL and Redis: DATABASE_URL / REDIS_URL when set; otherwise containers
 * started with testcontainers when a Docker engine answers (developer laptops); otherwise the
 * services on 127.0.0.1 (CI and these machines, which have no Docker engine).
 */
import { existsSync } from 'node:fs';

const LOCAL_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';

function dockerMayAnswer(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

export default async function setup() {
  const stops: (() => Promise<unknown>)[] = [];
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
    let started = false;
    if (dockerMayAnswer()) {
      try {
        const { GenericContainer, Wait } = await import('testcontainers');
        if (!process.env.DATABASE_URL) {
          const postgres = await new GenericContainer('postgres:16-alpine')
            .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
            .withExposedPorts(5432)
            .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
            .start();
          stops.push(() => postgres.stop());
          process.env.DATABASE_URL = `postgres://postgres@${postgres.getHost()}:${postgres.getMappedPort(5432)}/postgres`;
        }
        if (!process.env.REDIS_URL) {
          const redis = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
          stops.push(() => redis.stop());
          process.env.REDIS_URL = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`;
        }
        started = true;
      } catch (error) {
        console.warn(`testcontainers unavailable (${(error as Error).message}); using 127.0.0.1`);
      }
    }
    if (!started) {
      process.env.DATABASE_URL ??= LOCAL_DATABASE_URL;
      process.env.REDIS_URL ??= LOCAL_REDIS_URL;
    }
  }
  return async () => {
    for (const stop of stops) await stop();
  };
}
