/**
 * Another service's answers, reused while the application's version of their subject is the one
 * they were filed under (application-versions.ts says why that is never stale once a change has
 * answered). When the version cannot be read (Redis away), every question is asked; every answer
 * is forgotten when the connection the versions are read over is lost.
 */
import type { ApplicationVersions, VersionedSubject } from './application-versions.js';
import type { Logger } from './logger.js';

/**
 * How long an answer is reused at most, whatever the version says: the bound on staleness should a
 * change's new version never reach Redis (its owner stopped between its commit and the version).
 */
export const REUSED_ANSWER_MAX_AGE_MS = 60_000;

interface Filed<T> {
  version: string;
  value: T;
  weight: number;
  askedAt: number;
}

export class ReusedAnswers<T> {
  private readonly answers = new Map<string, Filed<T>>();
  private weight = 0;
  // Counts lost connections: an answer asked before one is not filed after it.
  private generation = 0;

  constructor(
    private readonly versions: ApplicationVersions,
    private readonly subject: VersionedSubject,
    private readonly logger: Logger,
    /** The bound on what is kept, in the weight each answer is given (least recently used dropped first). */
    private readonly bound: { maxWeight: number; weightOf: (value: T) => number },
  ) {
    versions.onConnectionLost(() => {
      this.generation++;
      this.answers.clear();
      this.weight = 0;
    });
  }

  /** The answer to `question` about the application: reused while its version holds, else `ask`ed and filed. */
  async answer(applicationId: string, question: string, ask: () => Promise<T>): Promise<T> {
    const key = `${applicationId} ${question}`;
    const asked = this.generation;
    const askedAt = Date.now();
    let version: string;
    try {
      version = await this.versions.current(this.subject, applicationId);
    } catch (error) {
      this.logger.debug({ err: (error as Error).message, subject: this.subject }, 'version unreadable; asking its owner');
      return ask();
    }
    const filed = this.answers.get(key);
    if (filed?.version === version && askedAt - filed.askedAt < REUSED_ANSWER_MAX_AGE_MS) {
      // Re-inserted, so that it is the most recently used.
      this.answers.delete(key);
      this.answers.set(key, filed);
      return filed.value;
    }
    const value = await ask();
    const fresh = { version, value, weight: this.bound.weightOf(value), askedAt };
    if (this.generation === asked && fresh.weight <= this.bound.maxWeight) {
      this.drop(key);
      this.answers.set(key, fresh);
      this.weight += fresh.weight;
      // The least recently used first: a Map iterates in insertion order.
      while (this.weight > this.bound.maxWeight) this.drop(this.answers.keys().next().value as string);
    }
    return value;
  }

  private drop(key: string): void {
    this.weight -= this.answers.get(key)?.weight ?? 0;
    this.answers.delete(key);
  }
}
