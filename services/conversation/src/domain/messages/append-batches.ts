/**
 * Appends to one message that arrive while an earlier append to it is being written wait, and go
 * together in the next statement, their texts joined in arrival order. Every append to a message
 * takes that row's lock, so without this N concurrent appends would queue N statements behind one
 * another; batched, a burst of short appends costs two. Each caller gets the outcome of the
 * statement that carried its text. Batching is per process: batches of several processes queue on
 * the row lock, as single appends do.
 */
interface WaitingAppend<T> {
  text: string;
  resolve: (result: T) => void;
  reject: (error: unknown) => void;
}

/**
 * A batch holds texts of at most this many characters together (one longer text goes alone), so
 * that many large appends at once are not copied into one string of their whole size.
 */
export const MAX_BATCH_CHARACTERS = 1_000_000;

export class AppendBatches<T> {
  /** For each message with a statement in flight, the appends waiting for the next one. */
  private readonly waiting = new Map<string, WaitingAppend<T>[]>();

  /**
   * Appends `text` to the message named by `key` with `write`, at once when no statement for that
   * message is in flight, else with the appends that arrive before it ends. Every `write` given for
   * one key must append to the same message.
   */
  append(key: string, text: string, write: (text: string) => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(key);
      if (queue) {
        queue.push({ text, resolve, reject });
        return;
      }
      this.waiting.set(key, []);
      void this.writeUntilNoneWait(key, [{ text, resolve, reject }], write);
    });
  }

  private async writeUntilNoneWait(key: string, first: WaitingAppend<T>[], write: (text: string) => Promise<T>): Promise<void> {
    let batch = first;
    while (batch.length > 0) {
      try {
        const result = await write(batch.map((append) => append.text).join(''));
        for (const append of batch) append.resolve(result);
      } catch (error) {
        for (const append of batch) append.reject(error);
      }
      batch = this.nextBatch(key);
    }
    this.waiting.delete(key);
  }

  /** The oldest waiting appends up to MAX_BATCH_CHARACTERS (at least one, if any wait); the rest keep waiting. */
  private nextBatch(key: string): WaitingAppend<T>[] {
    const queue = this.waiting.get(key)!;
    let taken = 0;
    let characters = 0;
    while (taken < queue.length && (taken === 0 || characters + queue[taken].text.length <= MAX_BATCH_CHARACTERS)) {
      characters += queue[taken].text.length;
      taken += 1;
    }
    return queue.splice(0, taken);
  }
}
