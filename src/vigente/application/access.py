"""Who is calling, transport-neutral: the bearer key of a request, its rate limit, and the
failed-authentication limit of its address (the HTTP API's dependencies and the MCP endpoint's
gate both call :func:`caller_of`, so a key has one budget for both surfaces).

The rate limit is a token bucket per key held in this process's memory: each key may send
``burst`` requests at once and ``rate`` per second on average. It is not shared between server
processes (several workers each allow the full rate) and it restarts empty on a restart; put a
shared limiter in front of the service when that matters.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from vigente.application.errors import ApiError
from vigente.application.tenants import Caller, TenantRegistry

__all__ = ["AUTH_FAILURE_BURST", "AUTH_FAILURE_RATE", "RateLimiter", "ServiceState",
           "caller_of"]

#: Failed authentications a client address may make at once, and per second on average.
AUTH_FAILURE_BURST = 20
AUTH_FAILURE_RATE = 1.0


class RateLimiter:
    """A token bucket per key: ``burst`` requests at once, refilled at ``rate`` per second."""

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("the rate limit needs rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float | None:
        """Spend one token of ``key``'s bucket: None when allowed, else the seconds to wait."""
        with self._lock:
            now = self._clock()
            tokens, last = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return None
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def wait(self, key: str) -> float | None:
        """The seconds until ``key`` has a token again (None when it has one), spending none."""
        with self._lock:
            now = self._clock()
            tokens, last = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            return None if tokens >= 1.0 else (1.0 - tokens) / self.rate

    @staticmethod
    def retry_after(wait: float) -> str:
        return str(max(1, math.ceil(wait)))


@dataclass
class ServiceState:
    """What the application shares between requests."""

    registry: TenantRegistry
    limiter: RateLimiter
    #: failed authentications per client address: a client that keeps sending wrong keys is
    #: refused (429) before its keys are checked, until its bucket refills
    auth_failures: RateLimiter = field(
        default_factory=lambda: RateLimiter(AUTH_FAILURE_RATE, AUTH_FAILURE_BURST)
    )


def _too_many_failures(wait: float) -> ApiError:
    return ApiError(
        429,
        "rate_limited",
        f"too many failed authentications from this address (at most {AUTH_FAILURE_BURST} at "
        f"once, {AUTH_FAILURE_RATE:g} per second): check the key, and retry after "
        f"{RateLimiter.retry_after(wait)} s",
        {"Retry-After": RateLimiter.retry_after(wait)},
    )


def caller_of(state: ServiceState, token: str | None, client: str | None = None) -> Caller:
    """The caller of a request whose bearer key is ``token``, after the key and its rate
    limit are checked. ``client``: the request's address, whose failed authentications are
    limited."""
    failures = f"client:{client}"
    if client is not None:
        wait = state.auth_failures.wait(failures)
        if wait is not None:
            raise _too_many_failures(wait)
    if not token:
        raise ApiError(
            401,
            "unauthorized",
            "no API key: send `Authorization: Bearer <key>` (an admin creates keys "
            "with POST /v1/admin/tenants/NAME/keys)",
            {"WWW-Authenticate": "Bearer"},
        )
    caller = state.registry.authenticate(token)
    if caller is None:
        if client is not None:
            state.auth_failures.take(failures)
        raise ApiError(
            401,
            "unauthorized",
            "unknown or revoked API key: check the key, or ask an admin for a new one",
            {"WWW-Authenticate": "Bearer"},
        )
    wait = state.limiter.take(caller.key_id)
    if wait is not None:
        raise ApiError(
            429,
            "rate_limited",
            f"too many requests for this key (at most {state.limiter.burst} at once, "
            f"{state.limiter.rate:g} per second): retry after "
            f"{RateLimiter.retry_after(wait)} s",
            {"Retry-After": RateLimiter.retry_after(wait)},
        )
    return caller
