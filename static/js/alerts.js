// Telling players who are looking elsewhere that the game needs them: the tab's title always says whose turn it is,
// and when the page is hidden, a new turn, a pairing or an end also shows as a notification (if the player allowed
// them) and sounds a short chime (unless switched off).

const CHIME = { frequency: 660, seconds: 0.25, volume: 0.12 };

export class Alerts {
  /** `sound()` says whether the player wants the chime. */
  constructor({ sound }) {
    this.base = document.title;
    this.sound = sound;
    this.audio = null;
  }

  /** Ask, during a click of the player's, for what needs one: leave to notify, and the right to play a sound. */
  prepare() {
    if ("Notification" in window && Notification.permission === "default") {
      Notification.requestPermission().catch(() => {});
    }
    if (!this.audio && window.AudioContext) this.audio = new AudioContext();
    this.audio?.resume?.().catch(() => {});
  }

  /** Show `status` before the page's name in the tab's title (null: the page's name alone). */
  title(status) {
    document.title = status ? `${status} · ${this.base}` : this.base;
  }

  /** Something needs the player now: tell them, if they are not looking at the page. */
  call(message) {
    if (!document.hidden) return;
    if ("Notification" in window && Notification.permission === "granted") {
      try {
        const notice = new Notification("Tâb", { body: message, tag: "tab-game" });
        notice.onclick = () => {
          window.focus();
          notice.close();
        };
      } catch {
        // Some browsers allow notifications only from a service worker: the title and the chime remain.
      }
    }
    if (this.sound()) this.chime();
  }

  chime() {
    const audio = this.audio;
    if (!audio || audio.state !== "running") return;
    const start = audio.currentTime;
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = CHIME.frequency;
    gain.gain.setValueAtTime(CHIME.volume, start);
    gain.gain.exponentialRampToValueAtTime(0.001, start + CHIME.seconds);
    tone.connect(gain).connect(audio.destination);
    tone.start(start);
    tone.stop(start + CHIME.seconds);
  }
}
