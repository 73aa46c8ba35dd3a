/** Which URLs of a message's content get a preview (pure rules, no system). */
import type { MessageNode } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { appendCannotChangeUrls, appendMayChangeUrls, contentUrls, MAX_PREVIEWS_PER_MESSAGE, previewUrl, previewUrlsOf } from '../../services/conversation/src/domain/link-previews/links.js';

const p = (...children: MessageNode[]): MessageNode => ({ type: 'p', children });
const text = (value: string): MessageNode => ({ text: value });
const link = (url: string, ...children: MessageNode[]): MessageNode => ({ type: 'link', url, children });
const mention = (id: string, name: string): MessageNode => ({ type: 'mention', user: { id }, children: [text(name)] });

/**
 * Seeded draws for the randomized tests, the same on every run: `below(n)` an integer under n,
 * `text(alphabet, length)` that many pieces of the alphabet joined.
 */
function seededDraws(seed: number) {
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const below = (n: number) => Math.floor(random() * n);
  return { below, text: (alphabet: readonly string[], length: number) => Array.from({ length }, () => alphabet[below(alphabet.length)]).join('') };
}

describe('contentUrls', () => {
  it('finds the URLs of text, bare domains with http:// added, and skips e-mail addresses', () => {
    expect(contentUrls([p(text('see example.com, then https://x.org/a?b=1. Mail bob@mail.example.net'))])).toEqual([
      'http://example.com',
      'https://x.org/a?b=1',
    ]);
  });

  it("takes a link node's url, with http:// added when it has no scheme, and not the URLs of its text", () => {
    expect(contentUrls([p(link('example.com/docs', text('other.org')), text(' and example.com/docs'))])).toEqual(['http://example.com/docs']);
  });

  it('skips mention and assignee nodes, and searches code, markdown, quotes and lists', () => {
    const content = [
      p(mention('bob', '@bob.com')),
      { type: 'assignee', user: { id: 'bob' }, children: [text('bob.org')] },
      { type: 'code', children: [text('https://code.example/x')] },
      { type: 'markdown', children: [text('[md](https://md.example/y)')] },
      { type: 'quote', children: [p(text('quoted.com'))] },
      { type: 'bullet', children: [text('https://list.example/')] },
    ];
    expect(contentUrls(content)).toEqual(['https://code.example/x', 'https://md.example/y', 'http://quoted.com', 'https://list.example/']);
  });

  it(`keeps each URL once, the first ${MAX_PREVIEWS_PER_MESSAGE} in order`, () => {
    const urls = Array.from({ length: 15 }, (_, i) => `https://site${i}.example/`);
    expect(contentUrls([p(text([urls[0], ...urls].join(' ')))])).toEqual(urls.slice(0, MAX_PREVIEWS_PER_MESSAGE));
  });

  it('gives nothing for a content without URLs', () => {
    expect(contentUrls([p(text('nothing to see'))])).toEqual([]);
  });
});

describe('previewUrl', () => {
  it('keeps http(s) URLs as they are and adds http:// to URLs without a scheme, host:port included', () => {
    expect(previewUrl('HTTPS://Example.com/A')).toBe('HTTPS://Example.com/A');
    expect(previewUrl(' example.com:8080/x ')).toBe('http://example.com:8080/x');
    expect(previewUrl('localhost:3000')).toBe('http://localhost:3000');
  });

  it('refuses other schemes, and what is no URL at all', () => {
    for (const raw of ['mailto:bob@example.com', 'ftp://example.com/file', 'javascript:alert(1)', '', 'http://', `https://e.com/${'a'.repeat(3000)}`])
      expect(previewUrl(raw), raw).toBeNull();
  });
});

describe('previewUrlsOf', () => {
  const content = [p(text('https://example.com/'))];

  it('gives none for a message that skips previews, and none for an action message', () => {
    expect(previewUrlsOf({ content, skipLinkPreviews: false, type: 'user_message' })).toEqual(['https://example.com/']);
    expect(previewUrlsOf({ content, skipLinkPreviews: true, type: 'user_message' })).toEqual([]);
    expect(previewUrlsOf({ content, skipLinkPreviews: false, type: 'action_message' })).toEqual([]);
  });
});

describe('appendMayChangeUrls', () => {
  const urlsOf = (value: string) => contentUrls([{ type: 'markdown', children: [text(value)] }]);

  it('is false for words appended after a space, true where the last word is or becomes a URL', () => {
    expect(appendMayChangeUrls('see https://example.com/a and then', ' more words')).toBe(false);
    expect(appendMayChangeUrls('a long answer', 'ing')).toBe(false);
    expect(appendMayChangeUrls('see example.co', 'm')).toBe(true);
    expect(appendMayChangeUrls('see example', '.com')).toBe(true);
    expect(appendMayChangeUrls('see example.com', 'x')).toBe(true);
    expect(appendMayChangeUrls('see https://example.com/a', '/b')).toBe(true);
    expect(appendMayChangeUrls('line one\nexample.or', 'g')).toBe(true);
  });

  // Drawn from the characters URLs are made of: whenever it says no change, the URLs of the whole
  // text before and after the append are the same.
  it('never says no change where the URLs of the whole text change', () => {
    const alphabet = ['a', 'b', 'c', 'o', 'm', 'g', 'x', '.', '/', ':', 'h', 't', 'p', 's', ' ', '\n', '@', 'w', '-', 'http', 'https://', '.com', '.org', 'www.'];
    const draw = seededDraws(1);
    let unchanged = 0;
    for (let run = 0; run < 5000; run++) {
      const before = draw.text(alphabet, 1 + draw.below(12));
      const appended = draw.text(alphabet, 1 + draw.below(4));
      if (appendMayChangeUrls(before, appended)) continue;
      unchanged++;
      expect({ before, appended, urls: urlsOf(before + appended) }).toEqual({ before, appended, urls: urlsOf(before) });
    }
    // Enough draws took the short way for the comparison to mean something.
    expect(unchanged).toBeGreaterThan(1000);
  });
});

describe('appendCannotChangeUrls', () => {
  const urlsOf = (value: string) => contentUrls([{ type: 'markdown', children: [text(value)] }]);

  it('is true only for text after a space that holds nothing a URL is made of', () => {
    expect(appendCannotChangeUrls(' token')).toBe(true);
    expect(appendCannotChangeUrls('\nnext line, and the end.')).toBe(true);
    expect(appendCannotChangeUrls('ing')).toBe(false);
    expect(appendCannotChangeUrls(' example.com')).toBe(false);
    expect(appendCannotChangeUrls(' mailto:x')).toBe(false);
    expect(appendCannotChangeUrls(' LocalHost')).toBe(false);
    expect(appendCannotChangeUrls('')).toBe(false);
  });

  // Drawn from the characters URLs are made of: whenever it says no change, the URLs of the whole
  // text before and after the append are the same, whatever the text before.
  it('never says no change where the URLs of the whole text change', () => {
    const alphabet = ['a', 'o', 'm', 'x', '.', '/', ':', 'h', 't', 'p', ' ', '\n', '\t', '@', '-', '。', 'https://', '.com', 'www.', 'local', 'host', 'LOCALHOST'];
    const draw = seededDraws(7);
    let unchanged = 0;
    for (let run = 0; run < 20000; run++) {
      const before = draw.text(alphabet, 1 + draw.below(12));
      const appended = draw.text(alphabet, 1 + draw.below(4));
      if (!appendCannotChangeUrls(appended)) continue;
      unchanged++;
      expect({ before, appended, urls: urlsOf(before + appended) }).toEqual({ before, appended, urls: urlsOf(before) });
    }
    // Enough draws took the short way for the comparison to mean something.
    expect(unchanged).toBeGreaterThan(1000);
  });

  // Concurrent appends to one message are written joined (AppendBatches): appends that each cannot
  // change a URL must not be able to together either.
  it('is true of appends joined when it is true of each', () => {
    const alphabet = ['a', 'x', '.', ':', ' ', '\n', 'loc', 'al', 'host', 'com'];
    const draw = seededDraws(11);
    let joined = 0;
    for (let run = 0; run < 20000 && joined < 2000; run++) {
      const parts = Array.from({ length: 2 + draw.below(3) }, () => draw.text(alphabet, 1 + draw.below(5)));
      if (!parts.every(appendCannotChangeUrls)) continue;
      joined++;
      expect({ parts, joined: appendCannotChangeUrls(parts.join('')) }).toEqual({ parts, joined: true });
    }
    expect(joined).toBeGreaterThan(200);
  });
});
