// The live connection: one websocket per session, reconnecting with exponential back-off.
//
// On every (re)connect the client catches up from the last change id it applied. It asks the
// server over the socket ({"type": "catch_up", "after": N}, answered by "changes" pages and
// {"type": "caught_up"}) and, in parallel, reads the same range from the HTTP change log; the first
// to finish ends the catch-up. Live "changes" that arrive meanwhile are buffered, then everything is
// handed over sorted by id; the model drops ids it has already applied, so overlaps are harmless.

import { fetchAllChanges } from "./api.js";

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 15000;
export const CLOSE_FORBIDDEN = 4403;
export const CLOSE_NOT_FOUND = 4404;

export class LiveConnection {
  /**
   * @param {object} options
   * @param {string} options.url          ws:// or wss:// URL of the session's socket
   * @param {object} options.config       page config (for the HTTP change log)
   * @param {() => number} options.lastId the last change id applied
   * @param {(changes: object[]) => void} options.onChanges
   * @param {(state: string, detail?: object) => void} options.onStatus
   */
  constructor({ url, config, lastId, onChanges, onStatus }) {
    Object.assign(this, { url, config, lastId, onChanges, onStatus });
    this.socket = null;
    this.attempt = 0;
    this.timer = null;
    this.held = false; // tests and the "pause" button keep the socket closed
    this.generation = 0;
    this.catching = null;
    this.stopped = false;
  }

  connect() {
    if (this.stopped || this.held) return;
    clearTimeout(this.timer);
    const generation = ++this.generation;
    this.onStatus(this.attempt ? "reconnecting" : "connecting");
    let socket;
    try {
      socket = new WebSocket(this.url);
    } catch (error) {
      this._scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.addEventListener("open", () => {
      if (generation !== this.generation) return;
      this.attempt = 0;
      this._startCatchUp(generation);
    });
    socket.addEventListener("message", (event) => {
      if (generation === this.generation) this._receive(event.data, generation);
    });
    socket.addEventListener("close", (event) => {
      if (generation !== this.generation) return;
      this.socket = null;
      this.catching = null;
      if (event.code === CLOSE_FORBIDDEN || event.code === CLOSE_NOT_FOUND) {
        this.stopped = true;
        this.onStatus("forbidden");
        return;
      }
      this._scheduleReconnect();
    });
  }

  /** Close the socket; with hold=true it stays closed until resume(). */
  disconnect({ hold = false } = {}) {
    this.held = hold;
    if (this.socket) this.socket.close(4000, "client closed");
  }

  resume() {
    this.held = false;
    this.attempt = 0;
    if (!this.socket) this.connect();
  }

  _scheduleReconnect() {
    if (this.stopped) return;
    if (this.held) {
      this.onStatus("paused");
      return;
    }
    const delay = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** this.attempt) * (0.75 + Math.random() * 0.5);
    this.attempt += 1;
    this.onStatus("offline", { retryInMs: delay, attempt: this.attempt });
    this.timer = setTimeout(() => this.connect(), delay);
  }

  _receive(raw, generation) {
    let message;
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    if (message.type === "changes" && Array.isArray(message.changes)) {
      if (this.catching) this.catching.buffer.push(...message.changes);
      else this.onChanges(message.changes);
    } else if (message.type === "caught_up") {
      this._finishCatchUp(generation, []);
    }
  }

  _startCatchUp(generation) {
    const after = this.lastId();
    this.catching = { generation, buffer: [] };
    this.onStatus("catching-up");
    this.socket.send(JSON.stringify({ type: "catch_up", after }));
    fetchAllChanges(this.config, after)
      .then(({ changes }) => this._finishCatchUp(generation, changes))
      .catch(() => {
        // The socket's own catch-up may still finish; if the socket dies, reconnecting retries both.
      });
  }

  _finishCatchUp(generation, changes) {
    const catching = this.catching;
    if (!catching || catching.generation !== generation || generation !== this.generation) return;
    this.catching = null;
    const all = [...changes, ...catching.buffer].sort((a, b) => a.id - b.id);
    if (all.length) this.onChanges(all);
    this.onStatus("live");
  }
}

export function socketUrl(path) {
  const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${window.location.host}${path}`;
}
