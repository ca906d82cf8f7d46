#!/usr/bin/env python3
"""Drives headless Chromium (Debian's chromium and chromium-driver, through selenium) against the agent's page.

One browser start does all of it, and prints one JSON object:
1. live view on the page for --seconds: every presented frame's number, read from a canvas (the synthetic test
   pattern's code row: 44 blocks, start guard, 32 bits, CRC-8, stop guard) and when it was presented (wall clock, ms);
2. --viewers pages playing at once (tabs), then one more WHEP offer from the page's origin, whose HTTP status and
   error text are reported (the agent's limit);
3. talkback from the first page for --talk-seconds: Chromium's fake microphone plays --tone (a WAV file).
Nothing is judged here: the Swift test that runs it asserts on the JSON.
"""
import argparse
import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

READER = r"""
window.camoFrames = [];
window.camoReadCode = function (video, canvas) {
  const w = video.videoWidth, h = video.videoHeight;
  if (!w || !h) return null;
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  const g = canvas.getContext('2d', {willReadFrequently: true});
  g.drawImage(video, 0, 0, w, h);
  const y = Math.floor(h * 18 / 24);
  const row = g.getImageData(0, y, w, 1).data;
  const bits = [];
  for (let i = 0; i < 44; i++) {
    const x = Math.floor(w * (2.5 + i) / 48);
    const luma = 0.299 * row[4 * x] + 0.587 * row[4 * x + 1] + 0.114 * row[4 * x + 2];
    if (luma > 170) bits.push(1); else if (luma < 85) bits.push(0); else return null;
  }
  if (bits[0] !== 1 || bits[1] !== 0 || bits[42] !== 0 || bits[43] !== 1) return null;
  let value = 0;
  for (let i = 2; i < 34; i++) value = value * 2 + bits[i];
  let crc = 0;
  for (let k = 3; k >= 0; k--) {
    crc ^= Math.floor(value / Math.pow(2, 8 * k)) & 0xff;
    for (let j = 0; j < 8; j++) crc = (crc & 0x80) ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  let sent = 0;
  for (let i = 34; i < 42; i++) sent = sent * 2 + bits[i];
  return sent === crc ? value : null;
};
window.camoWatch = function () {
  const video = document.querySelector('#video');
  const canvas = document.createElement('canvas');
  const step = (now, meta) => {
    const n = window.camoReadCode(video, canvas);
    window.camoFrames.push({n: n, t: performance.timeOrigin + now, w: video.videoWidth, h: video.videoHeight});
    video.requestVideoFrameCallback(step);
  };
  video.requestVideoFrameCallback(step);
};
"""

START = """
const done = arguments[arguments.length - 1];
const deadline = Date.now() + 20000;
(async () => {
  while (!window.camoLive && Date.now() < deadline) await new Promise(r => setTimeout(r, 100));
  if (!window.camoLive) return done({error: 'the page has no window.camoLive'});
  try { await window.camoLive.start(arguments[0] || {}); } catch (e) { return done({error: 'start: ' + e}); }
  const video = document.querySelector('#video');
  while (Date.now() < deadline && !(video.videoWidth > 0 && video.currentTime > 0)) await new Promise(r => setTimeout(r, 100));
  done({playing: video.videoWidth > 0 && video.currentTime > 0, sessionId: window.camoLive.sessionId || null,
        error: document.querySelector('#error') ? document.querySelector('#error').textContent : null});
})();
"""

# A fifth offer, made in the page so it comes from the same origin with the same credentials as the page's own.
EXTRA_OFFER = """
const done = arguments[arguments.length - 1];
(async () => {
  const pc = new RTCPeerConnection();
  pc.addTransceiver('video', {direction: 'recvonly'});
  pc.addTransceiver('audio', {direction: 'recvonly'});
  await pc.setLocalDescription(await pc.createOffer());
  const response = await fetch('/whep', {method: 'POST', headers: {'Content-Type': 'application/sdp'}, body: pc.localDescription.sdp, credentials: 'same-origin'});
  const text = await response.text();
  pc.close();
  done({status: response.status, body: text});
})().catch(e => done({status: -1, body: '' + e}));
"""

# Leases, with real connections from the page's origin: one never extended (when does the agent end it?), one
# extended every 5 s (alive at 30 s?), then DELETE (gone at once?). GET on a session's Location answers 200 while
# it lives and 404 after.
LEASES = """
const done = arguments[arguments.length - 1];
async function session() {
  const pc = new RTCPeerConnection();
  pc.addTransceiver('video', {direction: 'recvonly'});
  pc.addTransceiver('audio', {direction: 'recvonly'});
  await pc.setLocalDescription(await pc.createOffer());
  const until = Date.now() + 3000;
  while (pc.iceGatheringState !== 'complete' && Date.now() < until) await new Promise(r => setTimeout(r, 50));
  const response = await fetch('/whep', {method: 'POST', headers: {'Content-Type': 'application/sdp'}, body: pc.localDescription.sdp});
  const t0 = Date.now();
  if (response.status !== 201) throw new Error('POST /whep: ' + response.status + ' ' + await response.text());
  const location = response.headers.get('Location');
  await pc.setRemoteDescription({type: 'answer', sdp: await response.text()});
  return {pc, location, t0};
}
const sleep = ms => new Promise(r => setTimeout(r, ms));
const status = async (url, method) => (await fetch(url, {method: method || 'GET'})).status;
(async () => {
  const unextended = (async () => {
    const s = await session();
    while (Date.now() - s.t0 < 20000) {
      if (await status(s.location) === 404) return Date.now() - s.t0;
      await sleep(100);
    }
    return -1;
  })();
  const extended = (async () => {
    const s = await session();
    const codes = [];
    for (let k = 1; k <= 6; k++) {
      await sleep(s.t0 + 5000 * k - Date.now());
      if (k < 6) codes.push(await status(s.location + '/extend', 'POST'));
    }
    const alive = await status(s.location) === 200;
    const deleted = await status(s.location, 'DELETE');
    const after = await status(s.location);
    s.pc.close();
    return {alive, codes, deleted, after};
  })();
  const [ended, ext] = await Promise.all([unextended, extended]);
  done({unextendedEndedAfterMs: ended, extendedAliveAt30s: ext.alive, extendCodes: ext.codes, deleteStatus: ext.deleted, afterDeleteStatus: ext.after});
})().catch(e => done({error: '' + e}));
"""

# The page's settings table: how many rows, then one change through its own control (the mirror switch), read
# back through the API, and back again.
SETTINGS = """
const done = arguments[arguments.length - 1];
const read = async name => ((await (await fetch('/api/settings')).json()).settings || []).find(s => s.name === name);
(async () => {
  const until = Date.now() + 10000;
  while (!document.querySelector('#setting-imageFlipHorizontal') && Date.now() < until) await new Promise(r => setTimeout(r, 100));
  const rows = document.querySelectorAll('#settings tbody tr').length;
  const box = document.querySelector('#setting-imageFlipHorizontal');
  if (!box) return done({rows, error: 'no #setting-imageFlipHorizontal on the page'});
  const before = (await read('imageFlipHorizontal')).value;
  box.click();
  let after = before;
  for (let i = 0; i < 50 && after === before; i++) { await new Promise(r => setTimeout(r, 100)); after = (await read('imageFlipHorizontal')).value; }
  const again = document.querySelector('#setting-imageFlipHorizontal');
  again.click();
  let restored = after;
  for (let i = 0; i < 50 && restored === after; i++) { await new Promise(r => setTimeout(r, 100)); restored = (await read('imageFlipHorizontal')).value; }
  done({rows, before, after, restored, status: (document.querySelector('#status').textContent || '').length});
})().catch(e => done({error: '' + e}));
"""

STATUS = """
const done = arguments[arguments.length - 1];
fetch('/api/status').then(r => r.json()).then(s => done(s), e => done({error: '' + e}));
"""

TALK = """
const done = arguments[arguments.length - 1];
// A steady tone is what noise suppression removes: the test turns the browser's voice processing off.
window.camoLive.talk(arguments[0], {echoCancellation: false, noiseSuppression: false, autoGainControl: false}).then(() => done({ok: true}), e => done({ok: false, error: '' + e}));
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--url', required=True)
    parser.add_argument('--seconds', type=float, default=10)
    parser.add_argument('--viewers', type=int, default=4)
    parser.add_argument('--tone', help='a WAV file for the fake microphone (talkback)')
    parser.add_argument('--talk-seconds', type=float, default=4)
    parser.add_argument('--hold-seconds', type=float, default=0, help='seconds with no viewer first, and with all viewers playing')
    parser.add_argument('--leases', action='store_true', help='run the lease checks (the agent runs with --lease-seconds 10)')
    parser.add_argument('--chromedriver', default='/usr/bin/chromedriver')
    args = parser.parse_args()

    options = webdriver.ChromeOptions()
    for flag in ['--headless=new', '--no-sandbox', '--disable-gpu', '--ignore-certificate-errors', '--autoplay-policy=no-user-gesture-required',
                 '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', '--disable-background-timer-throttling',
                 '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows', '--mute-audio',
                 '--disable-features=WebRtcHideLocalIpsWithMdns']:
        options.add_argument(flag)
    if args.tone:
        options.add_argument('--use-file-for-fake-audio-capture=' + args.tone)
    result = {'phases': {}}
    driver = webdriver.Chrome(service=Service(args.chromedriver), options=options)
    mono = lambda: time.monotonic_ns() / 1e9
    driver.set_script_timeout(60)
    try:
        driver.get(args.url)
        driver.execute_script(READER)
        if args.hold_seconds:
            zero = mono()
            time.sleep(args.hold_seconds)
            result['phases']['zero'] = [zero, mono()]
        started = driver.execute_async_script(START, {})
        result['start'] = started
        if not started.get('playing'):
            result['error'] = 'live view did not start: %s' % started
            return result
        driver.execute_script('window.camoWatch()')
        one = mono()
        time.sleep(args.seconds)
        result['phases']['one'] = [one, mono()]
        result['frames'] = driver.execute_script('const f = window.camoFrames; window.camoFrames = []; return f;')
        result['wallMinusMonotonicMs'] = (time.time_ns() - time.monotonic_ns()) / 1e6
        live = (driver.execute_async_script(STATUS) or {}).get('live') or {}
        result['referenceSequence'] = live.get('lastFrameSequence')
        result['referenceCaptureTime'] = live.get('lastFrameCaptureTime')
        first = driver.current_window_handle

        # More viewers in tabs, then one more offer.
        tabs = [first]
        result['viewers'] = [started]
        for _ in range(args.viewers - 1):
            driver.switch_to.new_window('tab')
            driver.get(args.url)
            tabs.append(driver.current_window_handle)
            result['viewers'].append(driver.execute_async_script(START, {}))
        if args.hold_seconds:
            four = mono()
            time.sleep(args.hold_seconds)
            result['phases']['four'] = [four, mono()]
        result['extraOffer'] = driver.execute_async_script(EXTRA_OFFER)
        for tab in tabs[1:]:
            driver.switch_to.window(tab)
            driver.execute_script('window.camoLive && window.camoLive.stop()')
            driver.close()
        driver.switch_to.window(first)

        if args.leases:
            driver.set_script_timeout(90)
            result['leases'] = driver.execute_async_script(LEASES)
        if args.tone:
            result['talkOn'] = driver.execute_async_script(TALK, True)
            result['talkStartedAt'] = time.time()
            time.sleep(args.talk_seconds)
            result['talkOff'] = driver.execute_async_script(TALK, False)
        result['settings'] = driver.execute_async_script(SETTINGS)
        result['pageError'] = driver.execute_script("const e = document.querySelector('#error'); return e ? e.textContent : null")
        driver.execute_script('window.camoLive.stop()')
    finally:
        driver.quit()
    return result


if __name__ == '__main__':
    try:
        out = main()
    except Exception as error:  # the test prints this and fails
        out = {'error': '%s: %s' % (type(error).__name__, error)}
    json.dump(out, sys.stdout)
    sys.stdout.write('\n')
