/** How concurrent appends to one message are batched (the batching alone, with writes the test settles). */
import { describe, expect, it } from 'vitest';
import { AppendBatches, MAX_BATCH_CHARACTERS } from '../../services/conversation/src/domain/messages/append-batches.js';

/** A write the test ends: each call is recorded with its text and waits until settled. */
function heldWrites() {
  const calls: { key: string; text: string; settle: (outcome: boolean | Error) => void }[] = [];
  const writeFor = (key: string) => (text: string) =>
    new Promise<boolean>((resolve, reject) => {
      calls.push({ key, text, settle: (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome)) });
    });
  return { calls, writeFor };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('AppendBatches', () => {
  it('writes an append at once, and the appends that arrive meanwhile together in arrival order', async () => {
    const batches = new AppendBatches<boolean>();
    const { calls, writeFor } = heldWrites();
    const first = batches.append('m', ' a', writeFor('m'));
    const waiting = [' b', ' c', ' d'].map((text) => batches.append('m', text, writeFor('m')));
    await tick();
    expect(calls.map((call) => call.text)).toEqual([' a']);

    calls[0].settle(true);
    expect(await first).toBe(true);
    await tick();
    expect(calls.map((call) => call.text)).toEqual([' a', ' b c d']);
    calls[1].settle(false);
    expect(await Promise.all(waiting)).toEqual([false, false, false]);
  });

  it('writes appends to different messages side by side', async () => {
    const batches = new AppendBatches<boolean>();
    const { calls, writeFor } = heldWrites();
    const answers = [batches.append('m1', ' a', writeFor('m1')), batches.append('m2', ' b', writeFor('m2'))];
    await tick();
    expect(calls.map((call) => [call.key, call.text])).toEqual([
      ['m1', ' a'],
      ['m2', ' b'],
    ]);
    for (const call of calls) call.settle(true);
    expect(await Promise.all(answers)).toEqual([true, true]);
  });

  it('fails only the appends of a failed write, and writes the next batch after it', async () => {
    const batches = new AppendBatches<boolean>();
    const { calls, writeFor } = heldWrites();
    const first = batches.append('m', ' a', writeFor('m'));
    const second = [batches.append('m', ' b', writeFor('m')), batches.append('m', ' c', writeFor('m'))];
    await tick();
    calls[0].settle(true);
    await tick();
    const third = batches.append('m', ' d', writeFor('m'));
    calls[1].settle(new Error('connection lost'));
    await expect(second[0]).rejects.toThrow('connection lost');
    await expect(second[1]).rejects.toThrow('connection lost');
    await tick();
    expect(calls.map((call) => call.text)).toEqual([' a', ' b c', ' d']);
    calls[2].settle(true);
    expect([await first, await third]).toEqual([true, true]);
  });

  it('holds at most MAX_BATCH_CHARACTERS in one batch; the appends beyond wait for the next, in order', async () => {
    const batches = new AppendBatches<boolean>();
    const { calls, writeFor } = heldWrites();
    const third = Math.floor(MAX_BATCH_CHARACTERS / 3);
    const texts = ['a', 'b', 'c', 'd', 'e'].map((letter) => letter.repeat(third));
    const answers = [batches.append('m', ' first', writeFor('m')), ...texts.map((text) => batches.append('m', text, writeFor('m')))];
    for (let index = 0; index < 3; index++) {
      await tick();
      calls[index].settle(true);
    }
    expect(await Promise.all(answers)).toEqual(answers.map(() => true));
    expect(calls.map((call) => call.text)).toEqual([' first', texts.slice(0, 3).join(''), texts.slice(3).join('')]);
  });

  it('writes a text longer than a batch alone', async () => {
    const batches = new AppendBatches<boolean>();
    const { calls, writeFor } = heldWrites();
    const long = 'x'.repeat(MAX_BATCH_CHARACTERS + 1);
    const answers = [' first', long, ' after'].map((text) => batches.append('m', text, writeFor('m')));
    for (let index = 0; index < 3; index++) {
      await tick();
      calls[index].settle(true);
    }
    expect(await Promise.all(answers)).toEqual([true, true, true]);
    expect(calls.map((call) => call.text.length)).toEqual([6, MAX_BATCH_CHARACTERS + 1, 6]);
  });

  it('writes at once again when nothing is in flight', async () => {
    const batches = new AppendBatches<boolean>();
    const { calls, writeFor } = heldWrites();
    const first = batches.append('m', ' a', writeFor('m'));
    await tick();
    calls[0].settle(true);
    await first;
    await tick();
    const later = batches.append('m', ' b', writeFor('m'));
    await tick();
    expect(calls.map((call) => call.text)).toEqual([' a', ' b']);
    calls[1].settle(true);
    expect(await later).toBe(true);
  });
});
