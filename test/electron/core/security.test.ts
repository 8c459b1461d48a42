import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXTERNAL_LINKS, isAllowedExternalUrl } from '../../../common/app/links.js';
import { rendererHeaders, resolveRendererFile } from '../../../electron/core/renderer-files.js';
import {
  APP_ENTRY_URL,
  CONTENT_SECURITY_POLICY,
  isAppUrl,
  isTrustedSender,
  mainWindowOptions,
} from '../../../electron/core/security.js';

describe('the window', () => {
  it('keeps the renderer isolated and sandboxed: these webPreferences change only on purpose', () => {
    expect(mainWindowOptions('/app/out/electron/preload/preload.cjs', false).webPreferences).toStrictEqual({
      preload: '/app/out/electron/preload/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
      devTools: false,
    });
  });

  it('loads the app from its own scheme, not file://', () => {
    expect(APP_ENTRY_URL).toBe('app://sluice/index.html');
    expect(isAppUrl(APP_ENTRY_URL)).toBe(true);
  });

  it('allows scripts from the app only: no inline code, no eval, no remote origins', () => {
    const directives = new Map(
      CONTENT_SECURITY_POLICY.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-|https?:|\*/);
  });
});

describe('who may call the main process', () => {
  it('the app page in the top frame', () => {
    expect(isTrustedSender({ url: 'app://sluice/index.html', isMainFrame: true })).toBe(true);
  });

  it.each([
    ['an iframe of the app', { url: 'app://sluice/index.html', isMainFrame: false }],
    ['a web page', { url: 'https://example.com/', isMainFrame: true }],
    ['a local file', { url: 'file:///home/user/evil.html', isMainFrame: true }],
    ['another host on our scheme', { url: 'app://evil/index.html', isMainFrame: true }],
    ['a URL with credentials', { url: 'app://user:pw@sluice/index.html', isMainFrame: true }],
    ['something unparsable', { url: 'not a url', isMainFrame: true }],
  ])('not %s', (_name, frame) => {
    expect(isTrustedSender(frame)).toBe(false);
  });

  it('nothing without a frame (it was destroyed or navigated away)', () => {
    expect(isTrustedSender(null)).toBe(false);
  });
});

describe('links opened in the browser', () => {
  it('only our own https links, exactly', () => {
    expect(isAllowedExternalUrl(EXTERNAL_LINKS.fakeCardTest)).toBe(true);
    for (const url of [
      'http://github.com/AltraMayor/f3',
      `${EXTERNAL_LINKS.fakeCardTest}/../../evil`,
      `${EXTERNAL_LINKS.fakeCardTest}?next=https://evil.example`,
      'file:///etc/passwd',
      'smb://server/share',
      'https://evil.example/',
    ]) {
      expect(isAllowedExternalUrl(url), url).toBe(false);
    }
  });
});

describe('serving the built renderer', () => {
  const root = resolve('/srv/ui');

  it('maps paths to files inside the folder, with their types', () => {
    expect(resolveRendererFile(root, '/')).toEqual({
      path: '/srv/ui/index.html',
      contentType: 'text/html; charset=utf-8',
    });
    expect(resolveRendererFile(root, '/assets/index-abc.js')).toEqual({
      path: '/srv/ui/assets/index-abc.js',
      contentType: 'text/javascript; charset=utf-8',
    });
  });

  it.each([
    '/../etc/passwd',
    '/assets/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd.js',
    '/..%2f..%2fetc/shadow.js',
    '/%E0%A4%A.js',
    '/index.html%00.js',
    '/assets/',
  ])('refuses %s', (path) => {
    expect(resolveRendererFile(root, path)).toBeNull();
  });

  it('refuses file types it does not serve', () => {
    expect(resolveRendererFile(root, '/settings.json')).toBeNull();
    expect(resolveRendererFile(root, '/main.js.map')).toBeNull();
  });

  it('sends the CSP with every response', () => {
    expect(rendererHeaders('text/html; charset=utf-8')).toMatchObject({
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
    });
  });
});
