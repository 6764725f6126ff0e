// The page: its panels, the state machine of a game (idle, waiting for an opponent, playing, over), the
// messages, the scoreboards and the identification. The games themselves are in games.js.
//
// Frames are shown one at a time, in order, animating what changed between two of them (a throw, a move, a
// capture) before the next one.

import { LEVELS } from "./ai.js";
import { Alerts } from "./alerts.js";
import { Board } from "./board.js";
import { LocalGame, OnlineGame, changesBetween, stateOf } from "./games.js";
import * as online from "./online.js";
import { BLUE, DEFAULT_SIZE, IllegalMove, MAX_SIZE, MIN_SIZE, RED, State, opponent } from "./rules/tab.js";
import { clearScores, loadScores, recordScore, summarize } from "./scores.js";
import { Sticks, describeThrow, throwName } from "./sticks.js";

const $ = (id) => document.getElementById(id);

// Animation factor, and the computer's pause between two actions so that a person can follow them.
const SPEEDS = {
  normal: { factor: 1, pace: 800 },
  fast: { factor: 0.4, pace: 320 },
  instant: { factor: 0, pace: 0 },
};
const TURN_SECONDS = 120;
const SETTINGS_KEY = "tab.settings.v1";
// sessionStorage: the online game this tab was playing, rejoined at once after a reload (the player stays signed in
// by the site's session cookie, in every tab and after a restart: their other games are offered under "Your games").
const GAME_KEY = "tab.game";
// How often a page asks whether an invitation was answered, and for how long it waits for a rematch offer.
const INVITATION_POLL_MS = 2000;
const REMATCH_WAIT_MS = 5 * 60 * 1000;

const MODE_LABELS = {
  idle: "No game yet",
  waiting: "Waiting for an opponent",
  throw: "Your move: throw the sticks",
  "choose-piece": "Your move: choose a piece",
  "choose-destination": "Your move: choose a destination",
  pass: "Your move: pass the turn",
  wait: "Opponent's turn",
  over: "Game over",
};

// Friendlier words for the rules' refusals (the engine's own message is kept as the reason).
const REFUSALS = {
  "No piece on that cell": "That cell is empty: choose one of your highlighted pieces.",
  "That piece is not yours": "That piece is your opponent's: choose one of your highlighted pieces.",
  "A piece's first move must be a tâb (1)": "A piece that has never moved can only start with a 1 (Tâb).",
  "You can't move in the last row while you have pieces in the first row":
    "Pieces in the last row can't move while you still have pieces in your first row.",
  "cannot capture to your own piece": "That piece can't move: its landing cell holds one of your own pieces.",
  "Invalid move: must play the dice's value":
    "Choose one of the highlighted destinations (or click the piece again to choose another).",
};

// ---------------------------------------------------------------------------------------------------------
// The page

class App {
  constructor() {
    this.phase = "idle"; // idle | waiting | playing | over
    this.game = null;
    this.frame = null;
    this.analysis = null;
    this.lastMove = null;
    this.login = null;
    this.pending = 0;
    this.queue = Promise.resolve();
    this.history = [];
    this.result = null;

    this.form = $("config");
    this.board = new Board($("board"), {
      onActivate: (cell, how) => this.activateCell(cell, how),
      onCursor: (cell, position) => this.describeCursor(cell, position),
      speed: () => this.speed().factor,
    });
    this.sticks = new Sticks($("sticks"), {
      onThrow: (how) => this.throwSticks(how),
      caption: $("sticks-caption"),
      speed: () => this.speed().factor,
    });

    this.alerts = new Alerts({ sound: () => this.form.elements.sound.checked });
    this.myTurn = false;

    this._fillLevels();
    this._restoreSettings();
    this._bind();
    this.renderIdle();
    this.renderScoreboard();
    setInterval(() => this.renderClock(), 1000);
    this._restoreSession().then(() => {
      this._joinAsked();
      this._invitationAsked();
    });
  }

  /** The lobby's "Play alice" link: join that player's group and size online (after logging in, if need be). */
  _joinAsked() {
    const asked = new URLSearchParams(window.location.search);
    const group = Number(asked.get("group"));
    const size = Number(asked.get("size"));
    if (!asked.has("group") || !asked.has("size")) return;
    // Once: a reload must not join again.
    window.history.replaceState(null, "", window.location.pathname);
    if (this.phase === "playing" || this.phase === "waiting") return;
    if (![...this.form.elements.size.options].some((option) => Number(option.value) === size)) return;
    this.form.elements.opponent.value = "online";
    this.form.elements.size.value = String(size);
    this.form.elements.group.value = String(group);
    this._syncSettings();
    this._saveSettings();
    this.start();
  }

  // Invitations and rematches --------------------------------------------------------------------------

  /** The link of an invitation (…/play/tab/?invite=<token>): show who invites to what, to accept or decline. */
  async _invitationAsked() {
    const token = new URLSearchParams(window.location.search).get("invite");
    if (!token) return;
    window.history.replaceState(null, "", window.location.pathname);
    try {
      this.showInvitation(await online.invitation(token), { mine: false });
    } catch (problem) {
      this.refuse(`That invitation cannot be opened: ${problem.message}`);
    }
  }

  /** Invite whoever opens a link to a game online with these settings; start it when they accept. */
  async inviteFriend() {
    if (this.phase === "playing" || this.phase === "waiting") {
      this.refuse("A game is on: quit it before inviting a friend.");
      return;
    }
    const { group, size } = this.settings();
    if (!Number.isInteger(group) || group < 1) {
      this.refuse("The group must be a whole number, 1 or more.");
      this.form.elements.group.focus();
      return;
    }
    if (!this.login) {
      this.afterLogin = () => this.inviteFriend();
      this.refuse("Log in first to invite a friend: enter a nick and a password.");
      $("login-popover").showPopover?.();
      $("nick").focus();
      return;
    }
    try {
      const invitation = await online.invite(group, size);
      this.showInvitation(invitation, { mine: true });
      this.watchInvitation(invitation.token, (answered) => this.invitationAnswered(answered));
    } catch (problem) {
      this.refuse(`Could not make an invitation: ${problem.message}`);
    }
  }

  showInvitation(invitation, { mine }) {
    this.invitation = invitation;
    this.invitationMine = mine;
    $("invite-card").hidden = false;
    $("invite-sent").hidden = !mine;
    $("invite-received").hidden = mine;
    this.collapsePanel(false);
    if (mine) {
      $("invite-link").value = new URL(`?invite=${encodeURIComponent(invitation.token)}`, window.location.href).href;
      $("invite-status").textContent = "Waiting for your friend to open the link (it works for 30 minutes)…";
      $("invite-link").focus();
      $("invite-link").select();
      return;
    }
    $("invite-what").textContent =
      `${invitation.inviter} invites you to a game of ${invitation.title} on ${invitation.variant}, ` +
      `in group ${invitation.pool}.`;
    const open = invitation.status === "open";
    $("invite-accept").hidden = !open;
    $("invite-decline").hidden = !open;
    $("invite-answer").textContent = open ? "" : `This invitation is ${invitation.status}.`;
    if (open) $("invite-accept").focus();
  }

  hideInvitation() {
    this.invitation = null;
    this.invitationMine = false;
    $("invite-card").hidden = true;
  }

  /** Ask now and then how an invitation stands, until it is answered: then `onAnswer(invitation)`. */
  watchInvitation(token, onAnswer) {
    clearInterval(this.invitationTimer);
    this.invitationTimer = setInterval(async () => {
      let invitation;
      try {
        invitation = await online.invitation(token);
      } catch {
        return; // the server is away for a moment: ask again
      }
      if (invitation.status === "open") return;
      clearInterval(this.invitationTimer);
      onAnswer(invitation);
    }, INVITATION_POLL_MS);
  }

  /** Another game starts, or the player logs out: stop waiting for answers, and withdraw this page's open offers
   * (an invitation, a rematch), so that nobody's acceptance seats the player in a game they left. */
  dropInvitations() {
    clearInterval(this.invitationTimer);
    clearInterval(this.rematchTimer);
    const offers = [this.invitationMine ? this.invitation?.token : null, this.rematchToken].filter(Boolean);
    this.rematchToken = null;
    if (this.invitationMine) this.hideInvitation();
    // Answered or lapsed meanwhile, or the session gone: nothing left to withdraw.
    return Promise.all(offers.map((token) => online.answerInvitation(token, "cancel").catch(() => {})));
  }

  invitationAnswered(invitation) {
    if (invitation.game) {
      this.hideInvitation();
      this.startInvited(invitation);
      return;
    }
    const why = { declined: "Your friend declined the invitation.", expired: "Nobody opened the link in time." };
    $("invite-status").textContent = why[invitation.status] ?? `The invitation was ${invitation.status}.`;
  }

  async cancelInvitation() {
    const invitation = this.invitation;
    clearInterval(this.invitationTimer);
    this.hideInvitation();
    if (!invitation) return;
    try {
      await online.answerInvitation(invitation.token, "cancel");
    } catch {
      // Answered meanwhile, or lapsed: nothing to cancel.
    }
  }

  async answerInvitation(answer) {
    const invitation = this.invitation;
    if (!invitation) return;
    if (answer === "accept" && !this.login) {
      this.afterLogin = () => this.answerInvitation("accept");
      this.refuse(`Log in to play ${invitation.inviter}: enter a nick and a password.`);
      $("login-popover").showPopover?.();
      $("nick").focus();
      return;
    }
    if (answer === "accept" && (this.phase === "playing" || this.phase === "waiting")) {
      this.refuse("A game is on: quit it before accepting.");
      return;
    }
    try {
      const answered = await online.answerInvitation(invitation.token, answer);
      this.hideInvitation();
      if (answered.game) this.startInvited(answered);
      else this.say(`You declined ${invitation.inviter}'s invitation.`);
    } catch (problem) {
      // Refused (answered meanwhile, lapsed…): closed for good. Unreachable: the invitation stays, to try again.
      if (problem.status >= 400 && problem.status < 500) {
        this.showInvitation({ ...invitation, status: "closed" }, { mine: false });
      }
      this.refuse(problem.message);
    }
  }

  /** Start the game of an accepted invitation (both players are seated already). */
  startInvited(invitation) {
    this.form.elements.opponent.value = "online";
    this._syncSettings();
    this.startOnline(
      { id: invitation.game, group: Number(invitation.pool), size: invitation.options.size },
      { rejoin: true },
    );
  }

  /** The end card's "Rematch": offer the opponent another game, or accept the one they offered. */
  async rematch() {
    const game = this.game;
    if (!game?.id) return;
    const button = $("end-rematch");
    button.disabled = true;
    try {
      const invitation = button.dataset.token
        ? await online.answerInvitation(button.dataset.token, "accept")
        : await online.rematch(game.id);
      if (invitation.game) {
        this.startInvited(invitation);
        return;
      }
      $("end-rematch-status").textContent = `Waiting for ${invitation.invitee} to accept…`;
      clearInterval(this.rematchTimer);
      this.rematchToken = invitation.token;
      this.watchInvitation(invitation.token, (answered) => {
        this.rematchToken = null;
        if (answered.game) this.startInvited(answered);
        else $("end-rematch-status").textContent = `${invitation.invitee} did not take the rematch.`;
      });
    } catch (problem) {
      button.disabled = false;
      $("end-rematch-status").textContent = problem.message;
    }
  }

  /** After an online game, look for the opponent's rematch offer for a while, to show it on the end card. */
  watchRematchOffers(game) {
    const until = Date.now() + REMATCH_WAIT_MS;
    clearInterval(this.rematchTimer);
    this.rematchTimer = setInterval(async () => {
      if (this.game !== game || Date.now() > until) {
        clearInterval(this.rematchTimer);
        return;
      }
      let offer;
      try {
        ({ offer } = await online.rematchOffer(game.id));
      } catch {
        return;
      }
      const button = $("end-rematch");
      if (!offer || button.dataset.token === offer.token || this.game !== game) return;
      clearInterval(this.rematchTimer);
      button.dataset.token = offer.token;
      button.textContent = "Accept rematch";
      button.disabled = false;
      $("end-rematch-status").textContent = `${offer.inviter} offers a rematch.`;
      this.alerts.call(`${offer.inviter} offers a rematch`);
    }, INVITATION_POLL_MS);
  }

  // Settings -----------------------------------------------------------------------------------------

  _fillLevels() {
    const select = this.form.elements.level;
    select.replaceChildren(
      ...LEVELS.map((entry) => new Option(`${entry.level} · ${entry.name}`, String(entry.level))),
    );
    select.value = String(Math.min(3, LEVELS.length));
    const sizes = this.form.elements.size;
    const options = [];
    for (let size = MIN_SIZE; size <= MAX_SIZE; size += 2) options.push(new Option(`${size} columns`, String(size)));
    sizes.replaceChildren(...options);
    sizes.value = String(DEFAULT_SIZE);
  }

  settings() {
    const form = this.form;
    return {
      size: Number(form.elements.size.value),
      opponent: form.elements.opponent.value,
      first: form.elements.first.value,
      level: Number(form.elements.level.value),
      group: Number(form.elements.group.value),
      speed: form.elements.speed.value,
      sound: form.elements.sound.checked,
    };
  }

  _restoreSettings() {
    let saved = {};
    try {
      saved = JSON.parse(localStorage.getItem(SETTINGS_KEY) || "{}") ?? {};
    } catch {
      saved = {};
    }
    const form = this.form;
    const reduce = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    const set = (name, value) => {
      if (value === undefined || value === null) return;
      const field = form.elements[name];
      if (field instanceof RadioNodeList) field.value = String(value);
      else if ([...(field.options ?? [])].some((option) => option.value === String(value)) || !field.options) {
        field.value = String(value);
      }
    };
    set("size", saved.size);
    set("opponent", saved.opponent);
    set("first", saved.first);
    set("level", Math.min(saved.level ?? LEVELS.length, LEVELS.length)); // a level that is no more: the hardest
    set("group", saved.group);
    set("speed", saved.speed ?? (reduce ? "instant" : "normal"));
    form.elements.sound.checked = saved.sound !== false;
    this._syncSettings();
  }

  _saveSettings() {
    try {
      localStorage.setItem(SETTINGS_KEY, JSON.stringify(this.settings()));
    } catch {
      // Private browsing: the settings last as long as the page.
    }
  }

  /** Enable what the chosen opponent uses, and preview the chosen board. */
  _syncSettings() {
    const { opponent: against } = this.settings();
    const local = against === "computer";
    for (const element of document.querySelectorAll("[data-for='computer']")) element.hidden = !local;
    for (const element of document.querySelectorAll("[data-for='online']")) element.hidden = local;
    const level = LEVELS.find((entry) => entry.level === Number(this.form.elements.level.value));
    $("level-how").textContent = level?.how ?? "";
    $("start").textContent = local ? "Start vs computer" : "Find an opponent";
    document.body.dataset.speed = this.form.elements.speed.value;
    if (this.phase === "idle" || this.phase === "over") this.renderIdle();
  }

  speed() {
    return SPEEDS[this.form.elements.speed.value] ?? SPEEDS.normal;
  }

  pace() {
    return this.speed().pace;
  }

  // Events -------------------------------------------------------------------------------------------

  _bind() {
    this.form.addEventListener("change", () => {
      this._saveSettings();
      this._syncSettings();
    });
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.start();
    });
    $("start").addEventListener("click", (event) => {
      event.preventDefault();
      this.start();
    });
    $("quit").addEventListener("click", () => this.askToQuit());
    for (const answer of document.querySelectorAll("#confirm-quit [data-answer]")) {
      answer.addEventListener("click", () => $("confirm-quit").close(answer.dataset.answer));
    }
    $("confirm-quit").addEventListener("close", () => {
      if ($("confirm-quit").returnValue === "quit") this.quit();
    });
    $("pass").addEventListener("click", () => this.passTurn());
    $("open-instructions").addEventListener("click", () => $("instructions").showModal());
    $("open-scoreboard").addEventListener("click", () => this.openScoreboard());
    $("panel-toggle").addEventListener("click", () => this.togglePanel());
    for (const button of document.querySelectorAll("[data-close]")) {
      button.addEventListener("click", () => button.closest("dialog").close());
    }
    for (const dialog of document.querySelectorAll("dialog")) {
      // A click on the backdrop closes the overlay.
      dialog.addEventListener("click", (event) => {
        if (event.target === dialog) dialog.close();
      });
    }

    // The scoreboard's tabs.
    const tabs = [...document.querySelectorAll("[role='tab']")];
    for (const tab of tabs) {
      tab.addEventListener("click", () => this.selectTab(tab.id));
      tab.addEventListener("keydown", (event) => {
        const index = tabs.indexOf(tab);
        if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
          const next = tabs[(index + (event.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
          this.selectTab(next.id);
          next.focus();
          event.preventDefault();
        }
      });
    }
    $("ranking-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.loadRanking();
    });
    $("clear-local").addEventListener("click", () => {
      if (window.confirm("Delete every recorded game against the computer?")) {
        clearScores();
        this.renderScoreboard();
      }
    });

    // Identification.
    $("login-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.logIn();
    });
    $("logout").addEventListener("click", () => this.logOut());
    $("logout-everywhere").addEventListener("click", () => this.logOut({ everywhere: true }));
    $("invite").addEventListener("click", () => this.inviteFriend());
    $("invite-cancel").addEventListener("click", () => this.cancelInvitation());
    $("invite-copy").addEventListener("click", async () => {
      $("invite-link").select();
      try {
        await navigator.clipboard.writeText($("invite-link").value);
        $("invite-status").textContent = "Link copied: send it to your friend. Waiting for them…";
      } catch {
        $("invite-status").textContent = "Copy the link above (it is selected) and send it to your friend.";
      }
    });
    $("invite-accept").addEventListener("click", () => this.answerInvitation("accept"));
    $("invite-decline").addEventListener("click", () => this.answerInvitation("decline"));
    $("end-rematch").addEventListener("click", () => this.rematch());
    // A call refused because the session has ended (logged out on another device, say): log in again to go on.
    window.addEventListener("session-ended", () => {
      if (this.login) this.setLogin(null);
    });
    $("my-games").addEventListener("click", (event) => {
      const button = event.target.closest("button[data-game]");
      if (button) this.resumeOnline(button.dataset.game);
    });

    // The end screen.
    $("end-again").addEventListener("click", () => this.start());
    $("end-scores").addEventListener("click", () => this.openScoreboard());
    $("end-close").addEventListener("click", () => this.hideEnd());

    for (const event of ["beforeunload", "pagehide"]) {
      window.addEventListener(event, () => {
        this.unloading = true;
      });
    }
    window.addEventListener("pageshow", () => {
      this.unloading = false;
    });

    // Space throws the sticks when no control has the focus.
    document.addEventListener("keydown", (event) => {
      if (event.key !== " " || event.defaultPrevented) return;
      const target = event.target;
      if (target !== document.body && target !== document.documentElement) return;
      event.preventDefault();
      this.throwSticks({ keyboard: true });
    });
  }

  togglePanel() {
    this.collapsePanel(!document.body.classList.contains("panel-collapsed"));
  }

  /** Hide or show the settings; on a phone they make room for the board while a game is on. */
  collapsePanel(collapsed) {
    document.body.classList.toggle("panel-collapsed", collapsed);
    $("panel-toggle").setAttribute("aria-expanded", String(!collapsed));
  }

  // Identification -----------------------------------------------------------------------------------

  async logIn() {
    const nick = $("nick").value.trim();
    const password = $("password").value;
    const error = $("login-error");
    error.textContent = "";
    if (!nick || !password) {
      error.textContent = "Enter a nick and a password.";
      return;
    }
    // The server checks the password against its slow hash: say so meanwhile.
    $("login-submit").disabled = true;
    $("login-submit").textContent = "Checking…";
    $("login-submit").setAttribute("aria-busy", "true");
    try {
      const signed = await online.signIn({ nick, password });
      this.setLogin({ nick: signed.nick });
      $("password").value = "";
      $("login-popover").hidePopover?.();
      this.say(`Welcome, ${signed.nick}! You can now play online.`);
      if (this.afterLogin) {
        const then = this.afterLogin;
        this.afterLogin = null;
        then();
      } else {
        await this.loadMyGames({ offer: true });
      }
    } catch (problem) {
      error.textContent =
        problem.status === 401 ? "This nick is taken, or the password is wrong." : problem.message || String(problem);
    } finally {
      $("login-submit").disabled = false;
      $("login-submit").textContent = "Log in";
      $("login-submit").removeAttribute("aria-busy");
    }
  }

  setLogin(login) {
    this.login = login;
    if (!login) {
      this.myGames = [];
      this.renderMyGames();
      this.afterLogin = null;
      this.dropInvitations();
    }
    $("account-card").hidden = !login;
    $("logged-out").hidden = Boolean(login);
    $("logged-in").hidden = !login;
    $("user-nick").textContent = login ? login.nick : "";
    $("user-initial").textContent = login ? login.nick.slice(0, 1).toUpperCase() : "";
    this.renderControls();
  }

  /** Log out of this browser, or of every browser and device (`everywhere`); an online game in play stays on the
   * server, to be resumed after logging in again, and runs out of time meanwhile. */
  async logOut({ everywhere = false } = {}) {
    if (this.game?.kind === "online" && (this.phase === "playing" || this.phase === "waiting")) {
      const ask =
        this.phase === "playing"
          ? "Your online game goes on without you, and is lost if your turn runs out before you log in again. Log out?"
          : "Logging out stops looking for an opponent. Log out?";
      if (!window.confirm(ask)) return;
      if (this.phase === "waiting") await this.quit();
      this.game?.close();
      this.game = null;
      this.phase = "idle";
      this.renderIdle();
    }
    await this.dropInvitations(); // while the session can still withdraw them
    try {
      await online.signOut({ everywhere });
    } catch (problem) {
      if (problem.status !== 401) {
        this.refuse(`Could not log out: ${problem.message}`);
        return;
      }
    }
    sessionStorage.removeItem(GAME_KEY);
    this.setLogin(null);
    this.say(
      everywhere
        ? "You are logged out on every browser and device. You can still play against the computer."
        : "You are logged out. You can still play against the computer.",
    );
  }

  async _restoreSession() {
    sessionStorage.removeItem("tab.login"); // where an older version of the page kept the nick and the password
    const resumed = LocalGame.resumed(this);
    if (resumed) this.resumeLocal(resumed);
    const nick = document.body.dataset.nick;
    if (!nick) {
      sessionStorage.removeItem(GAME_KEY);
      return;
    }
    this.setLogin({ nick });
    let saved = null;
    try {
      saved = JSON.parse(sessionStorage.getItem(GAME_KEY) || "null");
    } catch {
      saved = null;
    }
    const asked = new URLSearchParams(window.location.search).get("game");
    if (asked) window.history.replaceState(null, "", window.location.pathname);
    await this.loadMyGames({ offer: !resumed, resume: resumed ? null : (asked ?? saved?.id ?? null) });
  }

  /** Fetch the player's games in progress and show them under "Your games". `resume`: the id of a game to go back
   * to at once (a reload, a "Resume" link); `offer`: otherwise, point the player to the games waiting for them. */
  async loadMyGames({ offer = false, resume = null } = {}) {
    let mine;
    try {
      mine = await online.myGames();
    } catch {
      return; // the server is away: the games stay where they are, and the next sign-in lists them
    }
    if (!mine.nick) {
      // The session ended meanwhile (logged out elsewhere, or expired).
      sessionStorage.removeItem(GAME_KEY);
      this.setLogin(null);
      this.notice("Your session has ended: log in again to play online.");
      return;
    }
    this.myGames = mine.games;
    this.renderMyGames();
    const idle = this.phase !== "playing" && this.phase !== "waiting";
    const wanted = this.myGames.find((entry) => entry.game === resume && entry.kind === "tab");
    if (wanted && idle) {
      this.resumeOnline(wanted.game);
      return;
    }
    if (resume && !wanted) sessionStorage.removeItem(GAME_KEY);
    const mineHere = this.myGames.filter((entry) => entry.kind === "tab");
    if (offer && idle && mineHere.length > 0) {
      const first = mineHere[0];
      const rivals = first.opponents.length ? ` against ${first.opponents.join(", ")}` : "";
      this.notice(
        mineHere.length === 1
          ? `You have a game in progress${rivals}: resume it under “Your games”.`
          : `You have ${mineHere.length} games in progress: resume one under “Your games”.`,
      );
      this.collapsePanel(false);
    }
  }

  renderMyGames() {
    const list = $("my-games");
    const games = this.myGames ?? [];
    $("my-games-none").hidden = games.length > 0;
    list.replaceChildren(
      ...games.map((entry) => {
        const item = document.createElement("li");
        const what = document.createElement("span");
        const group = entry.pool ? `group ${entry.pool}` : "practice";
        const where = entry.kind === "tab" ? `${group} · ${entry.variant}` : entry.variant;
        const rivals = entry.opponents.length ? `against ${entry.opponents.join(", ")}` : "waiting for an opponent";
        what.textContent = `${entry.title} · ${where} · ${rivals}`;
        item.append(what);
        const current = this.game?.kind === "online" && this.game.id === entry.game;
        if (entry.your_turn && !current) {
          const turn = document.createElement("strong");
          turn.className = "my-game-turn";
          turn.textContent = "your turn";
          item.append(" ", turn);
        }
        if (current) {
          const here = document.createElement("span");
          here.className = "my-game-here";
          here.textContent = "on the board";
          item.append(" ", here);
        } else if (entry.kind === "tab") {
          const button = document.createElement("button");
          button.type = "button";
          button.className = "button button-small";
          button.dataset.game = entry.game;
          button.textContent = "Resume";
          button.setAttribute("aria-label", `Resume your game ${rivals}`);
          item.append(" ", button);
        } else {
          const link = document.createElement("a");
          link.href = entry.resume;
          link.textContent = "Resume";
          item.append(" ", link);
        }
        return item;
      }),
    );
  }

  /** Go back to one of the player's online games (see "Your games"). */
  resumeOnline(id) {
    const entry = (this.myGames ?? []).find((candidate) => candidate.game === id);
    if (!entry) return;
    if (this.phase === "playing" || this.phase === "waiting") {
      this.refuse("A game is on: quit it before going back to another.");
      return;
    }
    const group = entry.pool ? Number(entry.pool) : this.settings().group;
    this.startOnline({ id, group, size: entry.options.size }, { rejoin: true });
  }

  // Starting and ending ------------------------------------------------------------------------------

  start() {
    if (this.phase === "playing" || this.phase === "waiting") {
      this.refuse("A game is on: quit it before starting another.");
      return;
    }
    this.alerts.prepare();
    const settings = this.settings();
    if (settings.opponent === "online") {
      if (!Number.isInteger(settings.group) || settings.group < 1) {
        this.refuse("The group must be a whole number, 1 or more.");
        this.form.elements.group.focus();
        return;
      }
      if (!this.login) {
        this.afterLogin = () => this.start();
        this.refuse("Log in first to play online: enter a nick and a password.");
        $("login-popover").showPopover?.();
        $("nick").focus();
        return;
      }
      this.startOnline({ group: settings.group, size: settings.size });
      return;
    }
    this.startLocal(settings);
  }

  _reset() {
    this.hideEnd();
    this.dropInvitations();
    this.game?.close();
    this.game = null;
    this.frame = null;
    this.analysis = null;
    this.lastMove = null;
    this.result = null;
    this.history = [];
    this.renderHistory();
    this.sticks.reset();
    this.clearNotice();
    if (window.matchMedia("(max-width: 899px)").matches) this.collapsePanel(true);
  }

  startLocal(settings) {
    this._reset();
    this.game = new LocalGame(this, {
      size: settings.size,
      level: settings.level,
      humanFirst: settings.first === "me",
    });
    this.phase = "playing";
    this.say(
      `New game on ${settings.size} columns against the computer (${this.game.levelName}). ` +
        (settings.first === "me" ? "You start." : "The computer starts."),
    );
    this.game.start();
    $("board").focus({ preventScroll: true });
  }

  /** Go on with the game against the computer that this tab was playing before a reload. */
  resumeLocal(game) {
    this._reset();
    this.form.elements.opponent.value = "computer";
    this.form.elements.size.value = String(game.state.size);
    this.form.elements.level.value = String(game.level);
    this._syncSettings();
    this.game = game;
    this.phase = "playing";
    game.start();
    this.notice(`Your game against the computer (${game.levelName}) goes on where it was.`);
  }

  async startOnline({ id, group, size }, { rejoin = false } = {}) {
    this._reset();
    if (rejoin) {
      // Show the settings of the game being rejoined.
      this.form.elements.opponent.value = "online";
      this.form.elements.size.value = String(size);
      this.form.elements.group.value = String(group);
      this._syncSettings();
    }
    this.phase = "waiting";
    this.alerts.title("Waiting for an opponent");
    this.sticks.setEnabled(false, "Waiting for an opponent…");
    this.renderIdle({ size, bottom: BLUE });
    this.renderControls();
    this.setMode("waiting");
    let gameId = id;
    if (!gameId) {
      this.say(`Looking for an opponent in group ${group} on ${size} columns…`);
      try {
        gameId = await online.join(group, size);
      } catch (problem) {
        this.phase = "idle";
        this.renderIdle();
        this.refuse(`Could not join a game: ${problem.message}`);
        return;
      }
    }
    sessionStorage.setItem(GAME_KEY, JSON.stringify({ id: gameId, group, size }));
    const game = new OnlineGame(this, this.login, { id: gameId, group, size });
    if (!rejoin) this.loadMyGames();
    this.game = game;
    this.rejoined = rejoin;
    this.renderMyGames();
    this.say(
      rejoin
        ? "Rejoining your online game…"
        : `Waiting for an opponent in group ${group} on ${size} columns. Share the group number with a friend!`,
    );
    game.connect();
  }

  onStreamLost(game) {
    // Leaving or reloading the page closes the stream too: the game must then stay saved for the next page.
    if (game !== this.game || this.unloading) return;
    sessionStorage.removeItem(GAME_KEY);
    game.close();
    this.game = null;
    this.phase = "idle";
    this.renderIdle();
    this.refuse("That online game is no longer available.");
  }

  /** Quitting a game in play loses it: the player says so first (waiting for an opponent stops at once). */
  askToQuit() {
    if (this.phase !== "playing") {
      this.quit();
      return;
    }
    $("confirm-quit-detail").textContent =
      this.game?.kind === "online"
        ? "Your opponent wins, and the game counts as a loss in the rankings."
        : "The computer wins, and the game counts as a loss in your scoreboard.";
    $("confirm-quit").returnValue = "";
    $("confirm-quit").showModal();
  }

  async quit() {
    const game = this.game;
    if (!game || (this.phase !== "playing" && this.phase !== "waiting")) {
      this.refuse("There is no game to quit.");
      return;
    }
    if (game.kind === "local") {
      game.quit();
      this.finish(game, { ...(this.frame ?? {}), over: true, winner: opponent(game.me), quit: true });
      return;
    }
    try {
      await game.quit();
      // The end arrives through the update stream, like any other change.
    } catch (problem) {
      sessionStorage.removeItem(GAME_KEY);
      game.close();
      this.phase = "over";
      this.refuse(`The server did not accept leaving: ${problem.message}`);
      this.renderControls();
    }
  }

  /** The game is over: say who won and why, record games against the computer, show the end screen. */
  finish(game, frame) {
    if (this.phase === "over" && this.result) return;
    this.phase = "over";
    game.close();
    if (game.kind === "online") this.loadMyGames();
    const me = game.me;
    let result;
    let title;
    let detail;
    if (game.kind === "local") {
      const won = frame.winner === me;
      result = frame.quit ? "quit" : won ? "win" : "loss";
      title = frame.quit ? "You quit" : won ? "You won!" : "The computer won";
      detail = frame.quit
        ? "The game counts as a loss in your scoreboard."
        : won
          ? `You captured every piece of the computer (${game.levelName}).`
          : "It captured all your pieces. Try again, or try an easier level.";
      recordScore({
        player: this.login?.nick ?? "Guest",
        size: game.state.size,
        level: game.level,
        levelName: game.levelName,
        first: game.humanFirst ? "you" : "computer",
        result,
        moves: game.moves,
        captured: game.captured,
      });
      this.renderScoreboard();
    } else {
      sessionStorage.removeItem(GAME_KEY);
      if (frame.cancelled || !me) {
        result = "none";
        title = "No game";
        detail = game.quitting
          ? "You stopped waiting for an opponent."
          : "Nobody joined within two minutes: the game was cancelled.";
      } else if (frame.winner === null) {
        // Only an administrator ends a started game without a winner.
        result = "none";
        title = "No result";
        detail = "The game was ended without a winner: it counts for no one.";
      } else {
        const rival = opponent(me);
        const rivalNick = game.nicks[rival];
        const loserPieces = frame.pieces.filter((piece) => piece && piece.color !== frame.winner).length;
        // Nothing for two minutes before the end: the player on turn ran out of time rather than left.
        const quiet = (game.lastMessageAt - game.previousMessageAt) / 1000 >= TURN_SECONDS - 5;
        if (frame.winner === me) {
          result = "win";
          title = "You won!";
          if (loserPieces === 0) detail = `You captured every piece of ${rivalNick}.`;
          else if (quiet) detail = `${rivalNick} ran out of time.`;
          else detail = `${rivalNick} left the game.`;
        } else {
          result = "loss";
          if (game.quitting) {
            title = "You left the game";
            detail = `${rivalNick} wins.`;
          } else if (loserPieces > 0) {
            title = "Time's up";
            detail = `You did not play within two minutes: ${rivalNick} wins.`;
          } else {
            title = `${rivalNick} won`;
            detail = `${rivalNick} captured all your pieces.`;
          }
        }
      }
    }
    this.result = result;
    this.myTurn = false;
    this.alerts.title(title.replace(/[.!]$/, ""));
    if (game.kind === "online" && result !== "none") this.alerts.call(`${title} ${detail}`);
    this.history.unshift(title);
    this.renderHistory();
    this.say(`${title}${/[.!?]$/.test(title) ? "" : "."} ${detail}`);
    this.setMode("over");
    for (const id of ["player-bottom", "player-top"]) $(id).classList.remove("is-turn");
    this.renderClock();
    this.sticks.setEnabled(false, "Game over");
    $("pass").hidden = true;
    this.renderControls();
    this.showEnd(result, title, detail);
  }

  showEnd(result, title, detail) {
    const screen = $("end-screen");
    screen.dataset.result = result;
    $("end-title").textContent = title;
    $("end-detail").textContent = detail;
    // An online game that was played has its page: every move again, and the result the rankings counted.
    const game = this.game;
    const replay = $("end-replay");
    replay.hidden = !(game?.kind === "online" && game.id && game.me && result !== "none");
    if (!replay.hidden) replay.href = `/games/${encodeURIComponent(game.id)}/`;
    // A game between two players online may be played again, by both players' agreement.
    const rematch = $("end-rematch");
    rematch.hidden = replay.hidden || !this.login;
    rematch.disabled = false;
    rematch.textContent = "Rematch";
    delete rematch.dataset.token;
    $("end-rematch-status").textContent = "";
    if (!rematch.hidden) this.watchRematchOffers(game);
    $("end-rating").hidden = true;
    if (!replay.hidden) this.showRatingChange(game);
    screen.hidden = false;
    $("end-again").focus({ preventScroll: true });
    // On a phone the card is under the board: brought into view.
    if (window.matchMedia("(max-width: 480px)").matches) screen.scrollIntoView({ block: "nearest" });
  }

  /** The end card of a rated online game: the player's rating before and after it. */
  async showRatingChange(game) {
    let ended;
    try {
      ended = await online.result(game.id);
    } catch {
      return; // the card does without it
    }
    if (this.game !== game) return;
    if (!ended.pool) {
      // Practice (against the computer): nothing rated, nobody to play again.
      $("end-rematch").hidden = true;
      clearInterval(this.rematchTimer);
      return;
    }
    const seat = ended.seats.find((entry) => entry.nick === game.login.nick);
    if (seat?.rating_before == null || seat.rating_after == null) return;
    const change = seat.rating_after - seat.rating_before;
    $("end-rating").textContent =
      `Your rating: ${seat.rating_before} → ${seat.rating_after} (${change >= 0 ? "+" : "−"}${Math.abs(change)})`;
    $("end-rating").hidden = false;
  }

  hideEnd() {
    $("end-screen").hidden = true;
  }

  // Frames -------------------------------------------------------------------------------------------

  /** Queue a frame of `game` to be shown after the ones before it. */
  enqueue(game, frame) {
    this.pending += 1;
    this.queue = this.queue
      .then(() => this.present(game, frame))
      .catch((error) => console.error(error))
      .finally(() => {
        this.pending -= 1;
      });
  }

  /** Resolve once every queued frame is shown. */
  async idle() {
    while (this.pending > 0) await this.queue;
  }

  get busy() {
    return this.pending > 0 || Boolean(this.game?.busy);
  }

  async present(game, frame) {
    if (game !== this.game || (this.phase === "over" && this.result)) return;
    if (frame.cancelled) {
      this.finish(game, frame);
      return;
    }
    const previous = this.frame;
    if (previous && frame.version !== null && previous.version !== null && frame.version <= previous.version) return;
    const change = changesBetween(previous, frame);
    this.frame = frame;
    this.analysis = this.analyze(frame);
    let greeting = "";
    if (this.phase === "waiting") {
      this.phase = "playing";
      this.hideEnd();
      const rival = game.nicks[opponent(game.me)];
      greeting = this.rejoined
        ? `Welcome back, ${game.login.nick}: you are in your game against ${rival}.`
        : `Game on against ${rival}!`;
      if (!this.rejoined) this.alerts.call(`Game on against ${rival}!`);
      this.rejoined = false;
      this.history.unshift(`Game on against ${rival}`);
      if (window.matchMedia("(max-width: 899px)").matches) this.collapsePanel(true);
    }
    if (change.move) this.lastMove = { from: change.move.from, to: change.move.to };
    else if (change.first && frame.step === "from" && frame.selected?.length === 2) {
      this.lastMove = { from: frame.selected[0], to: frame.selected[1] };
    }

    if (change.thrown) {
      this.sticks.setEnabled(false, "");
      await this.sticks.land(frame.dice);
    } else if (change.first && frame.dice) {
      this.sticks.show(frame.dice);
    } else if (!frame.dice) {
      this.sticks.reset();
    }

    this.renderBoard();
    if (change.move) await this.board.animateMove(change.move);

    this.note(game, change);
    if (greeting) this.lastEvents = greeting;
    if (frame.over) {
      this.finish(game, frame);
      return;
    }
    this.renderTurn();
    this.renderControls();
  }

  /** Work out, with the rules engine, what the player on turn may do in `frame`. */
  analyze(frame) {
    const state = stateOf(frame);
    const moves = frame.dice && frame.step === "from" && !frame.over ? state.legalMoves() : [];
    return {
      moves,
      movable: new Set(moves.map((move) => move.origin)),
      destinations: frame.step === "to" && frame.selected ? new Set(frame.selected) : new Set(),
      canThrow: !frame.over && state.canThrow,
    };
  }

  /** Return what the player at this browser has to do now. */
  mode() {
    if (this.phase === "idle") return "idle";
    if (this.phase === "waiting") return "waiting";
    if (this.phase === "over" || !this.frame) return "over";
    const frame = this.frame;
    if (frame.turn !== this.game.me) return "wait";
    if (!frame.dice) return "throw";
    if (frame.step === "to") return "choose-destination";
    if (this.analysis.moves.length > 0) return "choose-piece";
    if (frame.mustPass === this.game.me) return "pass";
    return "throw";
  }

  // Player actions -----------------------------------------------------------------------------------

  _whyNot() {
    if (this.phase === "idle") return "No game yet: choose your settings and press Start.";
    if (this.phase === "waiting") return "The game has not started: still waiting for an opponent.";
    if (this.phase === "over") return "This game is over: press Start for a new one.";
    const frame = this.frame;
    if (frame && frame.turn !== this.game.me) {
      return this.game.kind === "local"
        ? "Not your turn: the computer is playing."
        : `Not your turn: it is ${this.game.nicks[frame.turn]}'s turn.`;
    }
    return null;
  }

  async throwSticks({ keyboard = false } = {}) {
    const why = this._whyNot();
    if (why) return this.refuse(why);
    if (this.busy) return;
    const mode = this.mode();
    if (mode === "pass") {
      return this.refuse(`No piece can move with ${this.frame.dice.value}: pass your turn.`);
    }
    if (mode === "choose-piece" || mode === "choose-destination") {
      return this.refuse("You have already thrown: move one of the highlighted pieces.");
    }
    this.clearNotice();
    this.focusBoardAfterThrow = keyboard;
    const game = this.game;
    if (game.kind === "local") {
      game.throwSticks();
      return;
    }
    this.sticks.tumble();
    try {
      await game.throwSticks();
    } catch (problem) {
      this.sticks.reset();
      this.refuse(problem.message);
    }
  }

  async activateCell(cell, { keyboard = false } = {}) {
    const why = this._whyNot();
    if (why) return this.refuse(why);
    if (this.busy) return;
    const mode = this.mode();
    const dice = this.frame.dice;
    if (mode === "throw") {
      if (keyboard) return this.throwSticks({ keyboard: true });
      return this.refuse(
        dice
          ? `No piece can move with ${dice.value} (${throwName(dice.value)}): throw the sticks again.`
          : "Throw the sticks first: click them, or press Space.",
      );
    }
    if (mode === "pass") {
      return this.refuse(`No piece can move with ${dice.value} (${throwName(dice.value)}): press “Pass turn”.`);
    }
    // Ask the rules first: a refusal is explained at once, without a round trip.
    try {
      stateOf(this.frame).select(cell);
    } catch (problem) {
      if (!(problem instanceof IllegalMove)) throw problem;
      return this.refuse(REFUSALS[problem.message] ?? `${problem.message}.`);
    }
    this.clearNotice();
    try {
      await this.game.select(cell);
    } catch (problem) {
      this.refuse(problem.message);
    }
  }

  async passTurn() {
    const why = this._whyNot();
    if (why) return this.refuse(why);
    if (this.busy) return;
    if (this.mode() !== "pass") return this.refuse("You can only pass when no piece can move and you can't throw again.");
    try {
      await this.game.passTurn();
    } catch (problem) {
      this.refuse(problem.message);
    }
  }

  // Rendering ----------------------------------------------------------------------------------------

  /** Show the chosen board in its starting position while no game is on. */
  renderIdle(options = {}) {
    const settings = this.settings();
    const size = options.size ?? settings.size;
    const bottom =
      options.bottom ?? (settings.opponent === "computer" && settings.first === "computer" ? RED : BLUE);
    if (this.phase === "over" && this.frame) return;
    const pieces = State.initial(size).toJSON().pieces;
    this.board.setView({
      size,
      pieces,
      bottom,
      movable: new Set(),
      destinations: new Set(),
      selected: null,
      lastMove: null,
      interactive: false,
    });
    this.renderPlayers({ size, pieces, bottom });
    if (this.phase === "idle") {
      this.setMode("idle");
      this.sticks.setEnabled(false, "Press Start to play");
      if (!this.history.length) {
        this.say(
          settings.opponent === "computer"
            ? "Choose your settings and press Start to play against the computer."
            : "Log in, choose a group, and press “Find an opponent” to play online.",
        );
      }
    }
    this.renderControls();
  }

  renderBoard() {
    const frame = this.frame;
    const game = this.game;
    const mine = this.phase === "playing" && frame.turn === game.me && !frame.over;
    const analysis = this.analysis;
    this.board.setView({
      size: frame.size,
      pieces: frame.pieces,
      bottom: game.me ?? BLUE,
      movable: mine ? analysis.movable : new Set(),
      destinations: analysis.destinations,
      selected: frame.step === "to" ? frame.cell : null,
      lastMove: frame.step === "to" ? null : this.lastMove,
      interactive: mine,
    });
    this.renderPlayers({ size: frame.size, pieces: frame.pieces, bottom: game.me ?? BLUE, turn: frame.turn });
  }

  renderPlayers({ size, pieces, bottom, turn = null }) {
    const game = this.game;
    const settings = this.settings();
    for (const [id, color] of [
      ["player-bottom", bottom],
      ["player-top", opponent(bottom)],
    ]) {
      const element = $(id);
      const count = pieces.filter((piece) => piece && piece.color === color).length;
      let name;
      if (game?.names) name = game.names[color];
      else if (id === "player-bottom") name = this.login ? `You (${this.login.nick})` : "You";
      else name = settings.opponent === "computer" ? "The computer" : "Opponent";
      if (game?.kind === "online" && game.nicks && color === game.me) name = `You (${game.nicks[color]})`;
      if (game?.kind === "local" && color !== game.me) name = `The computer · ${game.levelName}`;
      element.dataset.color = color;
      element.classList.toggle("is-turn", turn === color && this.phase === "playing");
      element.querySelector(".player-name").textContent = name;
      element.querySelector(".player-pieces").textContent = `${count} of ${size} pieces`;
      element.querySelector(".player-color").textContent = color;
    }
    this.renderClock();
  }

  renderClock() {
    const game = this.game;
    for (const id of ["player-bottom", "player-top"]) {
      const clock = $(id).querySelector(".player-clock");
      const color = $(id).dataset.color;
      if (game?.kind !== "online" || this.phase !== "playing" || !this.frame || this.frame.turn !== color) {
        clock.textContent = "";
        continue;
      }
      const left = Math.max(0, Math.ceil(TURN_SECONDS - (Date.now() - game.lastMessageAt) / 1000));
      clock.textContent = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left`;
      clock.classList.toggle("is-urgent", left <= 20);
    }
  }

  /** Tell what just happened (a throw, a move, a capture, a pass) and remember it in the history. */
  note(game, change) {
    const who = (color) => game.names?.[color] ?? color;
    const events = [];
    if (change.thrown) {
      events.push(`${who(change.thrower)} threw ${describeThrow(change.thrown)}.`);
    }
    if (change.move) {
      const mover = who(change.move.piece.color);
      if (change.move.captured) {
        const victim = change.move.captured.color === game.me ? "one of your pieces" : "a piece";
        events.push(`${mover} captured ${victim}!`);
      } else {
        events.push(`${mover} moved a piece.`);
      }
    }
    if (change.forked && change.forked !== game.me) events.push(`${who(change.forked)} is choosing a way at the fork.`);
    if (change.passed) events.push(`${who(change.passed)} passed.`);
    if (events.length) {
      this.history.unshift(...[...events].reverse());
      this.history.length = Math.min(this.history.length, 6);
      this.renderHistory();
    }
    this.lastEvents = events.join(" ");
  }

  renderHistory() {
    const list = $("history");
    list.replaceChildren(
      ...this.history.slice(1, 4).map((text) => {
        const item = document.createElement("li");
        item.textContent = text;
        return item;
      }),
    );
  }

  /** Say whose turn it is and what to do now; update the mode, the sticks and the pass button. */
  renderTurn() {
    const mode = this.mode();
    const frame = this.frame;
    const game = this.game;
    const dice = frame.dice;
    let instruction;
    switch (mode) {
      case "throw":
        instruction = dice
          ? `No piece can move with ${dice.value}, but you throw again.`
          : "Your turn: throw the sticks.";
        break;
      case "choose-piece":
        instruction = `Choose a highlighted piece to move ${dice.value} cell${dice.value === 1 ? "" : "s"}.`;
        break;
      case "choose-destination":
        instruction =
          "At the fork: choose the piece's way, into the opponent's row or back along your second row " +
          "(or click the piece again to choose another).";
        break;
      case "pass":
        instruction = `No piece can move with ${dice.value}: pass your turn.`;
        break;
      default:
        instruction = game.kind === "local" ? "The computer is playing…" : `${game.nicks[frame.turn]}'s turn.`;
    }
    this.say([this.lastEvents, instruction].filter(Boolean).join(" "));
    this.setMode(mode);
    const myTurn = mode !== "wait";
    this.alerts.title(myTurn ? "● Your turn" : game.kind === "local" ? "Computer's turn" : `${game.nicks[frame.turn]}'s turn`);
    if (myTurn && !this.myTurn && game.kind === "online") this.alerts.call(`Your turn against ${game.nicks[opponent(game.me)]}.`);
    this.myTurn = myTurn;
    this.sticks.setEnabled(
      mode === "throw",
      mode === "throw" ? "Click or press Space to throw" : mode === "wait" ? "Opponent's turn" : "",
    );
    $("pass").hidden = mode !== "pass";
    if (mode === "pass" && this.focusBoardAfterThrow) {
      // Thrown by the keyboard, and nothing can move: Enter passes at once (not two Tabs away).
      this.focusBoardAfterThrow = false;
      $("pass").focus({ preventScroll: true });
    }
    if (mode === "choose-piece" || mode === "choose-destination") {
      const target =
        mode === "choose-piece"
          ? [...this.analysis.movable][0]
          : (frame.selected ?? [])[0];
      const cursor = this.board.cursorCell();
      const useful = mode === "choose-piece" ? this.analysis.movable.has(cursor) : this.analysis.destinations.has(cursor);
      if (!useful) this.board.moveCursorTo(target);
      if (this.focusBoardAfterThrow) {
        this.focusBoardAfterThrow = false;
        $("board").focus({ preventScroll: true });
      }
    }
  }

  setMode(mode) {
    const label = $("mode");
    label.dataset.mode = mode;
    label.querySelector(".mode-text").textContent =
      mode === "wait" && this.game?.kind === "local" ? "Computer's turn" : MODE_LABELS[mode];
    $("board-stage").dataset.mode = mode;
  }

  renderControls() {
    const on = this.phase === "playing" || this.phase === "waiting";
    $("start").disabled = on;
    $("invite").disabled = on;
    $("quit").disabled = !on;
    $("config-fields").disabled = on;
    $("quit").textContent = this.phase === "waiting" ? "Stop waiting" : "Quit game";
  }

  describeCursor(cell, position) {
    const frame = this.frame;
    const pieces = frame?.pieces ?? this.board.view.pieces;
    const piece = pieces[cell];
    const row = 4 - position.row;
    let text = `Row ${row} from your side, column ${position.col + 1}: `;
    if (!piece) text += "empty";
    else {
      const owner = this.game?.me ? (piece.color === this.game.me ? "your" : "opponent's") : piece.color;
      const state = piece.reachedLastRow ? "has been in the last row" : piece.inMotion ? "moving" : "not yet moved";
      text += `${owner} piece, ${state}`;
    }
    if (this.board.view.movable.has(cell)) text += ", can move";
    if (this.board.view.destinations.has(cell)) text += ", possible destination";
    $("board-cursor").textContent = `${text}.`;
  }

  // Messages -----------------------------------------------------------------------------------------

  /** Show what the game is about now (the polite live region). */
  say(text) {
    $("status").textContent = text;
  }

  /** Explain why an action was refused (an assertive live region, cleared after a while). */
  refuse(text) {
    const notice = $("notice");
    notice.textContent = text;
    notice.hidden = false;
    notice.classList.remove("is-fresh");
    void notice.offsetWidth; // restart the highlight animation
    notice.classList.add("is-fresh");
    clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => this.clearNotice(), 7000);
  }

  notice(text) {
    this.refuse(text);
  }

  clearNotice() {
    clearTimeout(this.noticeTimer);
    $("notice").textContent = "";
    $("notice").hidden = true;
  }

  // Scoreboards --------------------------------------------------------------------------------------

  openScoreboard() {
    const settings = this.settings();
    $("ranking-group").value = String(settings.group || 1);
    $("ranking-size").value = String(settings.size);
    this.renderScoreboard();
    $("scoreboard").showModal();
    if ($("tab-online").getAttribute("aria-selected") === "true") this.loadRanking();
  }

  selectTab(id) {
    for (const tab of document.querySelectorAll("[role='tab']")) {
      const selected = tab.id === id;
      tab.setAttribute("aria-selected", String(selected));
      tab.tabIndex = selected ? 0 : -1;
      $(tab.getAttribute("aria-controls")).hidden = !selected;
    }
    if (id === "tab-online") this.loadRanking();
  }

  renderScoreboard() {
    const scores = loadScores();
    const totals = summarize(scores);
    $("local-played").textContent = String(totals.played);
    $("local-won").textContent = String(totals.won);
    $("local-lost").textContent = String(totals.lost);
    $("local-rate").textContent = `${totals.rate}%`;
    $("local-streak").textContent = String(totals.streak);
    const body = $("local-rows");
    const rows = scores.slice(0, 50).map((score) => {
      const row = document.createElement("tr");
      row.dataset.result = score.result;
      const when = new Date(score.when);
      const cells = [
        when.toLocaleString(undefined, { dateStyle: "short", timeStyle: "short" }),
        score.player,
        `${score.size}`,
        score.levelName ? `${score.level} · ${score.levelName}` : String(score.level),
        score.first === "you" ? "You" : "Computer",
        String(score.moves ?? ""),
      ];
      for (const text of cells) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.append(cell);
      }
      const result = document.createElement("td");
      const badge = document.createElement("span");
      badge.className = `badge badge-${score.result}`;
      badge.textContent = { win: "Won", loss: "Lost", quit: "Quit" }[score.result] ?? score.result;
      result.append(badge);
      row.append(result);
      return row;
    });
    body.replaceChildren(...rows);
    $("local-empty").hidden = scores.length > 0;
    $("local-table").hidden = scores.length === 0;
    $("clear-local").hidden = scores.length === 0;
  }

  async loadRanking() {
    const group = Number($("ranking-group").value);
    const size = Number($("ranking-size").value);
    const status = $("online-status");
    const body = $("online-rows");
    if (!Number.isInteger(group) || group < 1) {
      status.textContent = "The group is a whole number, 1 or more.";
      return;
    }
    status.textContent = "Loading…";
    const full = $("ranking-full");
    full.href = `${full.dataset.base}${group}/${size}/`;
    try {
      const rows = await online.ranking(group, size);
      body.replaceChildren(
        ...rows.map((entry, index) => {
          const row = document.createElement("tr");
          if (this.login && entry.nick === this.login.nick) row.className = "is-me";
          const rate = entry.games ? Math.round((100 * entry.victories) / entry.games) : 0;
          for (const text of [String(index + 1), entry.nick, String(entry.victories), String(entry.games), `${rate}%`]) {
            const cell = document.createElement("td");
            cell.textContent = text;
            row.append(cell);
          }
          return row;
        }),
      );
      $("online-table").hidden = rows.length === 0;
      status.textContent = rows.length
        ? `Best players of group ${group} on ${size} columns.`
        : `No online games yet in group ${group} on ${size} columns.`;
    } catch (problem) {
      $("online-table").hidden = true;
      status.textContent = `The ranking could not be loaded: ${problem.message}`;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------

const app = new App();

// A small window onto the page for its browser tests (and the curious): read-only views and geometry.
window.tab = {
  board: () => (app.frame ? app.frame.pieces.map((piece) => piece && { ...piece }) : null),
  state: () => {
    const frame = app.frame;
    const analysis = app.analysis;
    return {
      phase: app.phase,
      mode: app.mode(),
      kind: app.game?.kind ?? null,
      me: app.game?.me ?? null,
      turn: frame?.turn ?? null,
      step: frame?.step ?? null,
      dice: frame?.dice ?? null,
      cell: frame?.cell ?? null,
      selected: frame?.selected ?? null,
      movable: analysis ? [...analysis.movable] : [],
      moves: analysis ? analysis.moves.map(({ origin, destination, captures }) => ({ origin, destination, captures })) : [],
      destinations: analysis ? [...analysis.destinations] : [],
      mustPass: frame?.mustPass ?? null,
      over: Boolean(frame?.over) || app.phase === "over",
      result: app.result,
      version: frame?.version ?? null,
      busy: app.busy,
      size: frame?.size ?? app.board.view?.size ?? null,
      game: app.game?.kind === "online" ? app.game.id : null,
    };
  },
  cellCenter: (cell) => app.board.cellCenterOnPage(cell),
  cellRect: (cell) => app.board.cellRect(cell),
};
