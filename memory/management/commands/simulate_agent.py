"""manage.py simulate_agent: play a demo scenario against a running server, like a real agent would.

It only talks HTTP (stdlib urllib, no new dependency), so it exercises authentication, validation,
idempotency and processing exactly as an outside agent does. Each loop starts a new session whose
external_id carries a timestamp, so reruns never collide with earlier sessions.

With --live (what `make demo` runs) it grows one session per language instead: the travel desk's
endless, varied episodes (memory/demo/live.py), resumed where a previous run left off.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import NoReverseMatch, reverse

from memory.demo.links import framework_links
from memory.demo.live import LiveScript, live_script
from memory.demo.scenarios import LANGUAGES, Scenario, ScenarioInteraction, load_scenarios

RETRY_DELAYS = (1.0, 3.0)  # interaction POSTs carry an idempotency key, so retrying them is safe
RETRY_STATUSES = {502, 503, 504}
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}


class Unreachable(Exception):
    """No HTTP answer at all: connection refused, DNS failure, timeout."""


class HttpFailure(Exception):
    """The server answered with an error status; `message` is its error text when it sent one."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status, self.message = status, message


@dataclass(frozen=True)
class ApiClient:
    base_url: str
    token: str
    timeout: float

    def post(self, path: str, body: dict[str, Any], query: dict[str, str] | None = None) -> tuple[int, Any]:
        return self._send("POST", path, body, query)

    def get(self, path: str) -> tuple[int, Any]:
        return self._send("GET", path, None, None)

    def _send(self, method: str, path: str, body: dict[str, Any] | None,
              query: dict[str, str] | None) -> tuple[int, Any]:
        url = self.base_url + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        request = urllib.request.Request(
            url, data=None if body is None else json.dumps(body).encode(), method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                     "Accept": "application/json", "User-Agent": "contextweaver-simulate-agent"},
        )
        try:
            with self._opener().open(request, timeout=self.timeout) as response:
                return response.status, _json_or_text(response.read())
        except urllib.error.HTTPError as exc:
            raise HttpFailure(exc.code, _error_message(exc.read(), exc.reason)) from None
        except (urllib.error.URLError, OSError) as exc:  # refused, reset, DNS, socket timeout
            reason = getattr(exc, "reason", exc)
            raise Unreachable(str(reason)) from None

    def _opener(self) -> urllib.request.OpenerDirector:
        # A proxy from the environment must not swallow requests to a local server.
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        return urllib.request.build_opener(urllib.request.ProxyHandler({} if host in LOOPBACK_HOSTS else None))


class Command(BaseCommand):
    help = ("Play a demo scenario through the HTTP API at a steady pace: one new session per loop, "
            "one interaction per interval; or, with --live, grow one live session per language.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", default="http://127.0.0.1:8000", help="Server root (default: %(default)s)")
        token = parser.add_mutually_exclusive_group(required=True)
        token.add_argument("--token", help="The project's API token (see create_project)")
        token.add_argument("--token-file", help="A file holding only the token (create_project --quiet > file)")
        parser.add_argument("--project", required=True, help="Project slug")
        parser.add_argument("--language", choices=(*LANGUAGES, "both"), default="en",
                            help="Scenario language; 'both' (with --live) alternates English and Chinese episodes")
        parser.add_argument("--scenario", help="Topic to play, e.g. travel or coding (default: take turns)")
        parser.add_argument("--live", action="store_true",
                            help="Grow one live session per language with new, varied episodes (the demo's agent)")
        parser.add_argument("--interval", type=float, default=2.0, help="Seconds between interactions")
        parser.add_argument("--loops", type=int, default=1,
                            help="Sessions to play (with --live: episodes); 0 = until Ctrl+C")
        parser.add_argument("--wait", action="store_true", help="Ask the server to process before answering")
        parser.add_argument("--timeout", type=float, default=60.0, help="Seconds to wait for each HTTP answer")

    def handle(self, *args: Any, base_url: str, token: str | None, token_file: str | None, project: str,
               language: str, scenario: str | None, live: bool, interval: float, loops: int, wait: bool,
               timeout: float, **options: Any) -> None:
        if interval < 0 or loops < 0 or timeout <= 0:
            raise CommandError("--interval and --loops must be >= 0 and --timeout > 0.")
        if language == "both" and not live:
            raise CommandError("--language both needs --live (scenarios are played one language at a time).")
        if live and scenario:
            raise CommandError("--scenario and --live do not go together: the live session plays its own episodes.")
        base_url = _checked_base_url(base_url)
        client = ApiClient(base_url=base_url, token=token if token is not None else _read_token(token_file),
                           timeout=timeout)
        player = _Player(self, client, project, interval=interval, wait=wait)
        try:
            if live:
                player.grow([live_script(lang) for lang in (LANGUAGES if language == "both" else (language,))], loops)
                return
            playlist = _playlist(language, scenario)
            played = 0
            while loops == 0 or played < loops:
                if played:
                    time.sleep(interval)
                player.play(playlist[played % len(playlist)], loop=played + 1)
                played += 1
        except KeyboardInterrupt:
            self.stdout.write(self.style.WARNING(
                f"\nInterrupted: {player.sent} interaction(s) sent in {player.sessions} session(s)."))


class _Player:
    """Sends one scenario as one session and reports each interaction on one line."""

    def __init__(self, command: BaseCommand, client: ApiClient, project: str, *, interval: float,
                 wait: bool) -> None:
        self.command, self.client, self.project = command, client, project
        self.interval, self.wait = interval, wait
        self.sent = self.sessions = 0
        self.slug_path = f"/api/projects/{urllib.parse.quote(project, safe='')}"

    def play(self, scenario: Scenario, *, loop: int) -> None:
        out = self.command.stdout
        scenario = scenario.dated_for(datetime.now(UTC).date())  # written dates agree with the text's
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        external_id = f"{scenario.external_id}-{stamp}"
        session = self._call(f"{self.slug_path}/sessions/", {
            "title": scenario.title, "task": scenario.task, "external_id": external_id,
            "metadata": {"simulated": True, "scenario": scenario.external_id, "language": scenario.language,
                         "loop": loop},
        })
        session_id = session["id"]
        self.sessions += 1
        # The link first: the session is worth opening while it grows, not once it is done.
        out.write(f"Session #{session_id} started: {scenario.title} ({len(scenario.interactions)} interactions to "
                  f"send).{self._web_link(session_id)}")
        out.flush()
        statuses = self._send(session_id, scenario.interactions, key=external_id)
        out.write(self.command.style.SUCCESS(f"Session #{session_id}: {_in_words(statuses)}"))
        out.flush()

    def grow(self, scripts: list[LiveScript], episodes: int) -> None:
        """Episode after episode into each script's live session (found by external_id, else started),
        the languages taking turns; `episodes` 0 = until interrupted."""
        out = self.command.stdout
        sessions = {script.language: self._live_session(script) for script in scripts}
        played = 0
        while episodes == 0 or played < episodes:
            script = scripts[played % len(scripts)]
            session_id, next_number = sessions[script.language]
            if played:
                time.sleep(self.interval)
            episode = script.episode(next_number)
            out.write(f"Live session #{session_id} ({script.language}), episode {episode.number}: {episode.topic}, "
                      f"{len(episode.interactions)} interactions.")
            out.flush()
            statuses = self._send(session_id, episode.interactions, key=f"{script.external_id}:{episode.number}")
            out.write(self.command.style.SUCCESS(f"Episode {episode.number} ({episode.topic}): {_in_words(statuses)}"))
            out.flush()
            sessions[script.language] = (session_id, next_number + 1)
            played += 1

    def _live_session(self, script: LiveScript) -> tuple[int, int]:
        """(session id, the next episode's number): the live session of an earlier run goes on growing; its
        interaction count numbers the next episode, so new episodes never repeat the ones already sent."""
        listed = self._get(f"{self.slug_path}/sessions/")
        found = next((row for row in listed if row.get("external_id") == script.external_id), None)
        if found is None:
            found = self._call(f"{self.slug_path}/sessions/", {
                "title": script.title, "task": script.task, "external_id": script.external_id,
                "metadata": {"simulated": True, "live": True, "language": script.language},
            })
            self.sessions += 1
        session_id, sent = found["id"], int(found.get("interaction_count") or 0)
        verb = f"goes on growing ({sent} interactions so far)" if sent else "started"
        self.command.stdout.write(f"Live session #{session_id} ({script.title}) {verb}.{self._web_link(session_id)}")
        self.command.stdout.flush()
        return session_id, sent

    def _send(self, session_id: int, interactions: list[ScenarioInteraction], *, key: str) -> Counter[str]:
        """Post the interactions one per interval, one progress line each; their statuses counted."""
        out = self.command.stdout
        url = f"{self.slug_path}/sessions/{session_id}/interactions/"
        query = {"wait": "true"} if self.wait else None
        statuses: Counter[str] = Counter()
        start, total = time.monotonic(), len(interactions)
        declared = framework_links(interactions, key)  # what an instrumented agent's framework knows
        for index, item in enumerate(interactions):
            # Steady pace: the n-th interaction leaves at start + n * interval, however slow the server was.
            time.sleep(max(0.0, start + index * self.interval - time.monotonic()))
            body = {"kind": item.kind, "content": item.content, "metadata": item.metadata,
                    "idempotency_key": f"{key}:{index}", "external_id": declared[index].external_id,
                    "links": [{"idempotency_key": f"{key}:{parent}"} for parent in declared[index].parents]}
            row = self._call(url, body, query=query, retry=True)["interactions"][0]
            self.sent += 1
            statuses[row["status"]] += 1
            memories = f" memories {row['memory_ids']}" if row.get("memory_ids") else ""
            duplicate = " (duplicate)" if row.get("duplicate") else ""
            status = "queued" if row["status"] == "pending" else row["status"]  # accepted; the worker is on it
            out.write(f"  [{index + 1:>2}/{total}] #{row['id']} {item.kind:<16} {status}{duplicate}{memories}")
            out.flush()
        return statuses

    def _get(self, path: str) -> list[dict[str, Any]]:
        try:
            data = self.client.get(path)[1]
        except (Unreachable, HttpFailure) as exc:
            raise self._command_error(exc) from None
        if not isinstance(data, list):
            raise CommandError(f"Unexpected answer from {self.client.base_url}{path}: {str(data)[:200]}")
        return data

    def _call(self, path: str, body: dict[str, Any], *, query: dict[str, str] | None = None,
              retry: bool = False) -> dict[str, Any]:
        delays = RETRY_DELAYS if retry else ()
        attempt = 0
        while True:
            try:
                _status, data = self.client.post(path, body, query=query)
                break
            except (Unreachable, HttpFailure) as exc:
                transient = isinstance(exc, Unreachable) or exc.status in RETRY_STATUSES
                if not transient or attempt >= len(delays):
                    raise self._command_error(exc) from None
                self.command.stderr.write(f"  retrying in {delays[attempt]:.0f}s: {exc}")
                time.sleep(delays[attempt])
                attempt += 1
        if not isinstance(data, dict):
            raise CommandError(f"Unexpected non-JSON answer from {self.client.base_url}{path}: {str(data)[:200]}")
        return data

    def _command_error(self, exc: Unreachable | HttpFailure) -> CommandError:
        base = self.client.base_url
        if isinstance(exc, Unreachable):
            return CommandError(f"Cannot reach the server at {base}: {exc}. Is it running?")
        if exc.status == 401:
            return CommandError(f"The server rejected the API token (HTTP 401: {exc.message}). "
                                "Check --token/--token-file, or issue one with create_project --token-only.")
        if exc.status == 403:
            return CommandError(f"The API token may not write to project {self.project!r} (HTTP 403: {exc.message}). "
                                "Use a token issued for this project.")
        if exc.status == 404:
            return CommandError(f"Project {self.project!r} was not found at {base} (HTTP 404: {exc.message}). "
                                "Create it with create_project or check --project.")
        return CommandError(f"The server answered HTTP {exc.status}: {exc.message}")

    def _web_link(self, session_id: int) -> str:
        try:
            path = reverse("session-detail", kwargs={"project_slug": self.project, "session_id": session_id})
        except NoReverseMatch:
            return ""
        return f" Watch it live at {self.client.base_url}{path}"


def _in_words(statuses: Counter[str]) -> str:
    """A finished session's interactions as a person reads them: "pending" is work queued, not a failure."""
    sent = sum(statuses.values())
    parts = [f"{statuses['kept']} kept as memories"] if statuses["kept"] else []
    if statuses["filtered"]:
        parts.append(f"{statuses['filtered']} filtered out as not worth remembering")
    if statuses["pending"]:
        parts.append(f"{statuses['pending']} queued for the worker")
    if statuses["failed"]:
        parts.append(f"{statuses['failed']} failed (the error is kept on each; they are retried)")
    return f"all {sent} interactions sent" + (f": {', '.join(parts)}." if parts else ".")


def _playlist(language: str, topic: str | None) -> list[Scenario]:
    try:
        scenarios = load_scenarios(language)
    except ValueError as exc:
        raise CommandError(f"Bad demo scenario data: {exc}") from exc
    if topic is None:
        if not scenarios:
            raise CommandError(f"No demo scenarios in language {language!r}.")
        return scenarios
    chosen = [s for s in scenarios if s.topic == topic]
    if not chosen:
        available = ", ".join(sorted({s.topic for s in scenarios})) or "none"
        raise CommandError(f"No {topic!r} scenario in language {language!r}; available: {available}.")
    return chosen


def _checked_base_url(url: str) -> str:
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise CommandError(f"--base-url must look like http://127.0.0.1:8000, not {url!r}.")
    return url.strip().rstrip("/")


def _read_token(path: str | None) -> str:
    if path is None:
        raise CommandError("Give --token or --token-file.")
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"Cannot read the token file {path}: {exc}") from exc
    if not token or any(ch.isspace() for ch in token):
        raise CommandError(f"The token file {path} must hold exactly one token "
                           "(write it with: manage.py create_project NAME --quiet > FILE).")
    return token


def _json_or_text(raw: bytes) -> Any:
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _error_message(raw: bytes, fallback: Any) -> str:
    """The API's {"error": {"message"}} text, or the start of whatever else the server sent."""
    data = _json_or_text(raw)
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        error = data["error"]
        fields = f" {json.dumps(error['fields'], ensure_ascii=False)}" if error.get("fields") else ""
        return f"{error.get('message', '')}{fields}"
    text = str(data).strip()
    return text[:200] if text else str(fallback)

