"""Acting as a person: the acts only people may do (curation, promoting) need a member's login, not a token.

ContextWeaver keeps curation for people (an agent's token is refused with 403), so a script that
approves edges or marks memories sensitive logs in with a member's account, through the same login
page a browser uses (wrong passwords count towards the lockout there too). The session cookie then
authenticates each call, and the drivers (client.py) send Django's CSRF token back on every write.
The login runs before a client's first call, as a plan like any operation (api.py).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from .errors import Unauthorized
from .exchange import Call

LOGIN_PATH = "/login/"
CSRF_COOKIE = "csrftoken"
CSRF_HEADER = "X-CSRFToken"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class Login:
    """A member's account: `Client(base_url, project="travel", login=Login("ana", password))`."""

    username: str
    password: str = field(repr=False)

    def __post_init__(self) -> None:
        if not self.username or not self.password:
            raise ValueError("A login needs a username and a password.")


def _page_read(body: Any) -> None:
    """The login page itself: only its CSRF cookie matters."""


def _logged_in(body: Any) -> None:
    """A successful login answers with a redirect (no body); a wrong one shows the form again."""
    if body:
        raise Unauthorized(401, {"error": {"code": "login_failed",
                                           "message": "Login failed: wrong username or password, or an "
                                                      "inactive account."}})


def login_plan(login: Login) -> Generator[Call[Any], Any, None]:
    yield Call("GET", LOGIN_PATH, parse=_page_read)
    yield Call("POST", LOGIN_PATH, parse=_logged_in,
               form={"username": login.username, "password": login.password})


def csrf_headers(method: str, cookies: Any, origin: str) -> dict[str, str]:
    """What a logged-in write must carry: the CSRF token from its cookie, and a Referer of the server's
    own origin (Django checks it over HTTPS)."""
    token = cookies.get(CSRF_COOKIE)
    if method.upper() in SAFE_METHODS or not token:
        return {}
    return {CSRF_HEADER: token, "Referer": f"{origin}/"}
