/** What a preview shows of an HTML page (pure extraction, no system). */
import { describe, expect, it } from 'vitest';
import { extractPagePreview } from '../../services/conversation/src/domain/link-previews/page-preview.js';
import { html } from './page-server.js';

const PAGE = 'https://site.example/articles/one?x=1';

describe('extractPagePreview', () => {
  it('takes the OpenGraph tags first, then the plain meta tags, then the first <title>', () => {
    const page = html(`
      <title>Plain title</title>
      <meta name="title" content="Named title">
      <meta property="og:title" content="Open &amp; Graph">
      <meta name="description" content="Named description">
      <meta property="og:description" content="">
      <meta name="image" content="https://cdn.example/named.png">`);
    expect(extractPagePreview(page, PAGE)).toEqual({
      title: 'Open & Graph',
      // An empty OpenGraph tag counts as none.
      description: 'Named description',
      imageUrl: 'https://cdn.example/named.png',
    });
  });

  it('falls back to the <title> text, untrimmed; no title at all is ""', () => {
    expect(extractPagePreview(html('<title>\n  A page  </title><title>second</title>'), PAGE)).toEqual({ title: '\n  A page  ', description: null, imageUrl: null });
    expect(extractPagePreview(html('<meta property="og:site_name" content="Site">'), PAGE)).toEqual({ title: '', description: null, imageUrl: null });
  });

  it('resolves a relative image against the page, and drops an image that is not http(s)', () => {
    const image = (src: string) => extractPagePreview(html(`<meta property="og:image" content="${src}">`), PAGE).imageUrl;
    expect(image('/img/a.png')).toBe('https://site.example/img/a.png');
    expect(image('b.png')).toBe('https://site.example/articles/b.png');
    expect(image('//cdn.example/c.png')).toBe('https://cdn.example/c.png');
    expect(image('data:image/png;base64,AAAA')).toBeNull();
    expect(image('javascript:alert(1)')).toBeNull();
  });

  it('matches tag and attribute names in any case, and reads unclosed tags', () => {
    expect(extractPagePreview('<HTML><HEAD><META PROPERTY="OG:TITLE" CONTENT="Loud"><TITLE>x', PAGE).title).toBe('Loud');
    expect(extractPagePreview('<title>Cut off', PAGE).title).toBe('Cut off');
  });

  it('cuts a title or description longer than 1000 characters', () => {
    const long = '😀'.repeat(1500);
    const preview = extractPagePreview(html(`<meta property="og:title" content="${long}"><meta name="description" content="${long}">`), PAGE);
    expect(Array.from(preview.title)).toHaveLength(1000);
    expect(Array.from(preview.description!)).toHaveLength(1000);
  });
});
