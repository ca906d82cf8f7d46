import Crypto
import Foundation

/// The page at `GET /`: one self-contained HTML file (inline CSS and JavaScript, no external URL: the agent may be
/// offline). It plays the live view through WHEP, renews the lease every third of its duration, talks back with
/// the browser's microphone, edits settings, lists paired studios and shows the status every 2 s.
///
/// Element ids, kept stable for browser tests:
/// - `#video`: the `<video>` playing the live view
/// - `#start`: starts (or restarts) the live view; `#stop` stops it
/// - `#talk`: starts talkback (a new WHEP session that also sends the microphone, then talkback on); again: off
/// - `#lease`: the live view's state ("live, lease renews every 40 s", "ended: lease expired; press Start")
/// - `#error`: the last error's text (hidden when there is none)
/// - `#login`, `#token`: the login form, shown when the API answers 401
/// - `#settings`: the settings table; each writable setting's input is `#setting-<name>`
/// - `#paired`: the paired studios table
/// - `#status`: the status, refreshed every 2 s
///
/// `window.camoLive = { start(), stop(), talk(on, microphone), sessionId }` drives the live view from a test
/// (`microphone`: getUserMedia's audio constraints; a test turns the browser's noise suppression off, which takes a
/// steady test tone for noise)
/// (`start()` and `talk(on)` return promises; `sessionId` is the current media session id or null).
public enum WebPage {
    /// The page's script (its SHA-256 goes in the Content-Security-Policy).
    static let script = #"""
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const state = { pc: null, sessionId: null, location: null, duration: 0, extendTimer: null,
                  talking: false, mic: null, loggedIn: true, ended: null };

  function showError(text) {
    const box = $("error");
    box.textContent = text || "";
    box.hidden = !text;
  }

  async function api(method, path, body, type) {
    const init = { method, headers: {}, credentials: "same-origin" };
    if (body !== undefined) {
      init.body = body;
      init.headers["Content-Type"] = type || "application/json";
    }
    const response = await fetch(path, init);
    if (response.status === 401) showLogin();
    return response;
  }

  async function errorText(response) {
    const text = await response.text().catch(() => "");
    try {
      const parsed = JSON.parse(text);
      if (parsed && parsed.error) return parsed.error;
    } catch (_) { /* not JSON */ }
    return text || (response.status + " " + response.statusText);
  }

  function showLogin() {
    state.loggedIn = false;
    $("login").hidden = false;
    $("app").hidden = true;
  }

  function hideLogin() {
    state.loggedIn = true;
    $("login").hidden = true;
    $("app").hidden = false;
  }

  $("login").addEventListener("submit", async (event) => {
    event.preventDefault();
    const response = await fetch("/login", {
      method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token: $("token").value.trim() })
    });
    if (!response.ok) {
      showError(await errorText(response));
      return;
    }
    $("token").value = "";
    showError("");
    hideLogin();
    refreshAll();
  });

  // MARK: Live view (WHEP)

  function gathered(pc) {
    return new Promise((resolve) => {
      if (pc.iceGatheringState === "complete") return resolve();
      const done = () => { pc.removeEventListener("icegatheringstatechange", check); resolve(); };
      const check = () => { if (pc.iceGatheringState === "complete") done(); };
      pc.addEventListener("icegatheringstatechange", check);
      setTimeout(done, 2000);
    });
  }

  function showLease(text) { $("lease").textContent = text; }

  function closePeer() {
    if (state.extendTimer) clearInterval(state.extendTimer);
    state.extendTimer = null;
    if (state.pc) state.pc.close();
    state.pc = null;
    if (state.mic) state.mic.getTracks().forEach((track) => track.stop());
    state.mic = null;
    state.talking = false;
    $("talk").textContent = "Talk";
    $("video").srcObject = null;
  }

  function leaseEnded(reason) {
    closePeer();
    state.sessionId = null;
    state.location = null;
    state.ended = reason;
    showLease("Live view ended: " + reason + ". Press Start to watch again.");
    $("start").textContent = "Restart live view";
  }

  async function extend() {
    if (!state.location) return;
    const response = await api("POST", state.location + "/extend").catch(() => null);
    if (!response) return;  // a network blip: the next tick tries again, well within the lease
    if (!response.ok) {
      leaseEnded(await errorText(response));
      return;
    }
    const body = await response.json();
    state.duration = body.sessionDurationSeconds || state.duration;
    showLease("Live (session " + state.sessionId.slice(0, 8) + "), lease renewed at " +
              new Date().toLocaleTimeString() + " for " + state.duration + " s");
  }

  async function start(withMicrophone, microphone) {
    await stop();
    showError("");
    showLease("Connecting…");
    const pc = new RTCPeerConnection({ iceServers: [] });
    state.pc = pc;
    pc.addTransceiver("video", { direction: "recvonly" });
    if (withMicrophone) {
      state.mic = await navigator.mediaDevices.getUserMedia({ audio: microphone || true });
      pc.addTransceiver(state.mic.getAudioTracks()[0], { direction: "sendrecv", streams: [state.mic] });
    } else {
      pc.addTransceiver("audio", { direction: "recvonly" });
    }
    const stream = new MediaStream();
    pc.addEventListener("track", (event) => {
      stream.addTrack(event.track);
      $("video").srcObject = stream;
    });
    pc.addEventListener("connectionstatechange", () => {
      if (pc === state.pc && pc.connectionState === "failed") leaseEnded("the connection failed");
    });
    pc.addEventListener("icecandidate", (event) => {
      // Candidates found after the offer was sent are trickled (RFC 8840 fragment).
      if (!event.candidate || !state.location || pc !== state.pc) return;
      const fragment = "a=mid:" + event.candidate.sdpMid + "\r\na=" + event.candidate.candidate + "\r\n";
      api("PATCH", state.location, fragment, "application/trickle-ice-sdpfrag").catch(() => {});
    });
    await pc.setLocalDescription(await pc.createOffer());
    await gathered(pc);
    const response = await api("POST", "/whep", pc.localDescription.sdp, "application/sdp");
    if (response.status !== 201) {
      const text = await errorText(response);
      closePeer();
      showLease("Not watching.");
      showError(text);
      throw new Error(text);
    }
    state.location = response.headers.get("Location");
    state.sessionId = response.headers.get("X-Media-Session-Id");
    state.duration = Number(response.headers.get("X-Session-Duration")) || 120;
    state.ended = null;
    await pc.setRemoteDescription({ type: "answer", sdp: await response.text() });
    state.extendTimer = setInterval(extend, Math.max(1, state.duration / 3) * 1000);
    showLease("Live (session " + state.sessionId.slice(0, 8) + "), lease " + state.duration +
              " s, renewed every " + Math.round(state.duration / 3) + " s");
    $("start").textContent = "Restart live view";
    return state.sessionId;
  }

  async function stop() {
    const location = state.location;
    state.location = null;
    state.sessionId = null;
    closePeer();
    if (location) {
      await api("DELETE", location).catch(() => {});
      showLease("Stopped.");
    }
  }

  async function talk(on, microphone) {
    if (on) {
      await start(true, microphone);
      const response = await api("POST", "/api/live/" + state.sessionId + "/talkback", JSON.stringify({ on: true }));
      if (!response.ok) {
        showError(await errorText(response));
        return false;
      }
      state.talking = true;
      $("talk").textContent = "Stop talking";
      return true;
    }
    if (!state.sessionId) return false;
    const response = await api("POST", "/api/live/" + state.sessionId + "/talkback", JSON.stringify({ on: false }));
    if (state.mic) state.mic.getAudioTracks().forEach((track) => { track.enabled = false; });
    state.talking = false;
    $("talk").textContent = "Talk";
    if (!response.ok) showError(await errorText(response));
    return response.ok;
  }

  $("start").addEventListener("click", () => start(false).catch((error) => showError(String(error.message || error))));
  $("stop").addEventListener("click", () => stop());
  $("talk").addEventListener("click", () =>
    talk(!state.talking).catch((error) => showError(String(error.message || error))));

  // MARK: Settings, paired studios, status

  function cell(row, text, tag) {
    const element = document.createElement(tag || "td");
    element.textContent = text;
    row.appendChild(element);
    return element;
  }

  function display(value) {
    return (value !== null && typeof value === "object") ? JSON.stringify(value) : String(value);
  }

  function settingInput(setting) {
    let input;
    if (Array.isArray(setting.choices) && setting.choices.length) {
      input = document.createElement("select");
      for (const choice of setting.choices) {
        const option = document.createElement("option");
        option.value = option.textContent = String(choice);
        input.appendChild(option);
      }
      input.value = String(setting.value);
    } else if (typeof setting.value === "boolean") {
      input = document.createElement("input");
      input.type = "checkbox";
      input.checked = setting.value;
    } else {
      input = document.createElement("input");
      input.type = typeof setting.value === "number" ? "number" : "text";
      input.value = setting.value === null || setting.value === undefined ? "" : display(setting.value);
    }
    input.id = "setting-" + setting.name;
    input.addEventListener("change", async () => {
      let value = input.type === "checkbox" ? input.checked : input.value;
      if (typeof setting.value === "number" && value !== "") value = Number(value);
      const response = await api("PUT", "/api/settings", JSON.stringify({ [setting.name]: value }));
      if (!response.ok) {
        showError(setting.name + ": " + await errorText(response));
      } else {
        showError("");
      }
      loadSettings();
    });
    return input;
  }

  async function loadSettings() {
    const response = await api("GET", "/api/settings");
    if (!response.ok) return;
    const data = await response.json();
    const list = Array.isArray(data) ? data : Array.isArray(data.settings) ? data.settings :
      Object.entries(data).map(([name, value]) => ({ name, value, writable: false }));
    const table = $("settings");
    table.replaceChildren();
    const head = table.createTHead().insertRow();
    ["Setting", "Value", "About"].forEach((title) => cell(head, title, "th"));
    const body = table.createTBody();
    for (const setting of list) {
      const row = body.insertRow();
      cell(row, setting.name);
      const value = cell(row, "");
      if (setting.writable) value.appendChild(settingInput(setting));
      else value.textContent = display(setting.value);
      cell(row, setting.description || "");
    }
  }

  async function loadPaired() {
    const response = await api("GET", "/api/paired");
    if (!response.ok) return;
    const data = await response.json();
    const list = Array.isArray(data) ? data : Array.isArray(data.studios) ? data.studios : [];
    const table = $("paired");
    table.replaceChildren();
    if (!list.length) {
      cell(table.insertRow(), "No paired studios.");
      return;
    }
    const columns = [...new Set(list.flatMap((item) => Object.keys(item)))];
    const head = table.createTHead().insertRow();
    columns.forEach((column) => cell(head, column, "th"));
    const body = table.createTBody();
    for (const item of list) {
      const row = body.insertRow();
      columns.forEach((column) => cell(row, item[column] === undefined ? "" : display(item[column])));
    }
  }

  async function loadStatus() {
    const response = await api("GET", "/api/status").catch(() => null);
    if (!response || !response.ok) return;
    hideLogin();
    $("status").textContent = JSON.stringify(await response.json(), null, 2);
  }

  function refreshAll() {
    loadStatus();
    loadSettings();
    loadPaired();
  }

  setInterval(() => { if (state.loggedIn && !document.hidden) loadStatus(); }, 2000);
  window.camoLive = {
    start: () => start(false),
    stop: () => stop(),
    talk: (on, microphone) => talk(on, microphone),
    get sessionId() { return state.sessionId; }
  };
  refreshAll();
})();
"""#

    static let style = #"""
body { font: 15px system-ui, sans-serif; margin: 0 auto; max-width: 1000px; padding: 1em; color: #222; }
header { display: flex; align-items: baseline; gap: 1em; flex-wrap: wrap; }
h1 { font-size: 1.4em; margin: 0 0 .5em; }
h2 { font-size: 1.1em; margin: 1.2em 0 .4em; }
video { width: 100%; background: #000; aspect-ratio: 16 / 9; }
button { font: inherit; padding: .4em 1em; margin: .4em .4em 0 0; }
#lease { color: #555; }
#error { background: #fde8e8; color: #8a1111; padding: .5em .8em; border-radius: 4px; white-space: pre-wrap; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; border-bottom: 1px solid #ddd; padding: .3em .5em; vertical-align: top; }
pre { background: #f4f4f4; padding: .6em; overflow: auto; max-height: 24em; }
"""#

    /// The whole page.
    public static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>camo-agent</title>
<style>
"""# + style + #"""
</style>
</head>
<body>
<header><h1>camo-agent</h1><span id="lease">Not watching.</span></header>
<div id="error" role="alert" hidden></div>
<form id="login" hidden>
<p>This camera needs a token. Make one on the agent with <code>camo-agent web token</code>.</p>
<label>Token <input id="token" type="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button>
</form>
<main id="app">
<section>
<video id="video" autoplay playsinline muted controls></video>
<div><button id="start" type="button">Start live view</button><button id="stop" type="button">Stop</button><button id="talk" type="button">Talk</button></div>
</section>
<section><h2>Settings</h2><table id="settings"></table></section>
<section><h2>Paired studios</h2><table id="paired"></table></section>
<section><h2>Status</h2><pre id="status"></pre></section>
</main>
<script>
"""# + script + #"""
</script>
</body>
</html>
"""#

    /// The Content-Security-Policy: only this page's own script (by hash) and style; requests to this origin only.
    static let contentSecurityPolicy: String = {
        let hash = Data(SHA256.hash(data: Array(script.utf8))).base64EncodedString()
        return "default-src 'none'; script-src 'sha256-\(hash)'; style-src 'unsafe-inline'; connect-src 'self'; "
            + "media-src 'self' blob: mediastream:; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; "
            + "base-uri 'none'"
    }()

    /// The response for `GET /`.
    static let response = WebResponse(
        status: 200,
        headers: [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Security-Policy", contentSecurityPolicy),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
        ],
        body: Array(html.utf8))
}
