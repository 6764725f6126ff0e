// The server, as the page uses it: signing in to the site (a session cookie), the course's Tâb functions as the
// site's own page calls them (signed in by that session: /play/tab/api/…), the course's `ranking` and its `update`
// event stream. Everything lives at the same origin as the page, under the root that the template names.

const API_ROOT = new URL(document.body.dataset.apiRoot || "/", document.baseURI);

/** The CSRF token that the page's calls carry: Django's cookie (renewed at sign-in), or the page's own copy. */
function csrfToken() {
  const cookie = document.cookie.split("; ").find((entry) => entry.startsWith("csrftoken="));
  return cookie ? decodeURIComponent(cookie.slice("csrftoken=".length)) : (document.body.dataset.csrf ?? "");
}

/** A request the server refused, or could not answer; `message` is meant for the player. */
export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

async function call(name, payload, method = "POST") {
  let response;
  try {
    response = await fetch(new URL(name, API_ROOT), {
      method,
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: method === "POST" ? JSON.stringify(payload) : undefined,
      credentials: "same-origin",
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
  if (response.status === 401 && name.startsWith("play/")) window.dispatchEvent(new Event("session-ended"));
  if (!response.ok || (data && typeof data.error === "string")) {
    throw new ApiError(data?.error || `The server answered with status ${response.status}.`, response.status);
  }
  return data;
}

/** Sign in to the site: create the account, or check the password of an existing one. Return {nick}. */
export function signIn({ nick, password }) {
  return call("account/sign-in", { nick, password });
}

/** End this browser's session; with `everywhere`, every session of the account, on every browser and device. */
export function signOut({ everywhere = false } = {}) {
  return call(everywhere ? "account/sign-out-everywhere" : "account/sign-out", {});
}

/** Who is signed in ({nick: null} if nobody) and their games in progress: {nick, games: [{game, kind, …}]}. */
export function myGames() {
  return call("account/games", null, "GET");
}

/** Ask for a game of `size` in `group`; return its id (the pairing itself arrives on the update stream). */
export async function join(group, size) {
  const data = await call("play/tab/api/join", { group, size });
  return data.game;
}

export function leave(game) {
  return call("play/tab/api/leave", { game });
}

export function roll(game) {
  return call("play/tab/api/roll", { game });
}

export function pass(game) {
  return call("play/tab/api/pass", { game });
}

export function notify(game, cell) {
  return call("play/tab/api/notify", { game, cell });
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

/** Invite whoever opens the returned invitation's link to a game: {token, status, game, …}. */
export function invite(group, size) {
  return call("play/invitations", { kind: "tab", options: { size }, group });
}

/** Offer the opponent of a finished game another; if they offered one already, it starts (its `game` is set). */
export function rematch(game) {
  return call("play/invitations", { rematch: game });
}

/** The opponent's open offer to play a finished game again, made to this player: {offer: invitation or null}. */
export function rematchOffer(game) {
  return call(`play/invitations?rematch_of=${encodeURIComponent(game)}`, null, "GET");
}

export function invitation(token) {
  return call(`play/invitations/${encodeURIComponent(token)}`, null, "GET");
}

/** Answer an invitation: "accept" (its game starts), "decline" or "cancel" (the inviter's). */
export function answerInvitation(token, answer) {
  return call(`play/invitations/${encodeURIComponent(token)}/${answer}`, {});
}

/** How a game ended, seat by seat: {seats: [{nick, rank, rating_before, rating_after}]} (ratings of rated games). */
export function result(game) {
  return call(`games/${encodeURIComponent(game)}/result`, null, "GET");
}
