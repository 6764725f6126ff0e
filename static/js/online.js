// The course's Tâb API, as the page uses it: POST functions with JSON bodies and the `update` event stream.
// Everything lives at the same origin as the page, under the root that the template names.

const API_ROOT = new URL(document.body.dataset.apiRoot || "/", document.baseURI);

/** A request the server refused, or could not answer; `message` is meant for the player. */
export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

async function call(name, payload) {
  let response;
  try {
    response = await fetch(new URL(name, API_ROOT), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(payload),
    });
  } catch {
    throw new ApiError("The server cannot be reached: check your connection and try again.", 0);
  }
  let data = {};
  try {
    data = await response.json();
  } catch {
    // Not JSON (a proxy's error page, say): the status code below tells the player what happened.
  }
  if (!response.ok || (data && typeof data.error === "string")) {
    throw new ApiError(data?.error || `The server answered with status ${response.status}.`, response.status);
  }
  return data;
}

/** Create the account, or check the password of an existing one. */
export function register({ nick, password }) {
  return call("register", { nick, password });
}

/** Ask for a game of `size` in `group`; return its id (the pairing itself arrives on the update stream). */
export async function join({ nick, password }, group, size) {
  const data = await call("join", { group, nick, password, size });
  return data.game;
}

export function leave({ nick, password }, game) {
  return call("leave", { nick, password, game });
}

export function roll({ nick, password }, game) {
  return call("roll", { nick, password, game });
}

export function pass({ nick, password }, game) {
  return call("pass", { nick, password, game });
}

export function notify({ nick, password }, game, cell) {
  return call("notify", { nick, password, game, cell });
}

/** Return the group's ten best players on boards of `size`: [{nick, victories, games}]. */
export async function ranking(group, size) {
  const data = await call("ranking", { group, size });
  return Array.isArray(data.ranking) ? data.ranking : [];
}

/**
 * The game's update stream. `onMessage(message, version)` gets every snapshot; the stream closes itself after
 * the message that names the winner, as the protocol asks. `onLost()` is called when the server refuses the
 * stream for good (unknown game); `onReconnecting()` while the browser tries to reconnect.
 */
export class UpdateStream {
  constructor({ nick }, game, { onMessage, onLost = () => {}, onReconnecting = () => {}, onOpen = () => {} }) {
    const url = new URL("update", API_ROOT);
    url.searchParams.set("nick", nick);
    url.searchParams.set("game", game);
    this.closed = false;
    this.source = new EventSource(url);
    this.source.onopen = () => onOpen();
    this.source.onmessage = (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message === null || typeof message !== "object") return;
      const version = event.lastEventId ? Number(event.lastEventId) : null;
      if ("winner" in message) this.close();
      onMessage(message, version);
    };
    this.source.onerror = () => {
      if (this.closed) return;
      if (this.source.readyState === EventSource.CLOSED) {
        this.close();
        onLost();
      } else {
        onReconnecting();
      }
    };
  }

  close() {
    this.closed = true;
    this.source.close();
  }
}
