"""Supabase JWT bearer auth: signature, expiry, audience and (when SUPABASE_JWT_ISSUER is set)
issuer; the user is the token's `sub`. Times are checked with CLOCK_SKEW_SECONDS of leeway, and
must be numbers.

HS256 tokens are checked with SUPABASE_JWT_SECRET; when SUPABASE_JWKS_URL is
set, asymmetric tokens (RS256/ES256, the project's signing keys) are checked
against its JWKS. AUTH_DISABLED (refused in production) makes every request
AUTH_DEV_USER_ID, for local development only.
"""

from __future__ import annotations

from functools import lru_cache
from uuid import UUID

import jwt

from app.api.errors import AuthError
from app.core.config import Settings

# Clock skew allowed between the server that issued a token and this one, on exp, nbf and iat: a
# token whose iat was a second ahead of this clock was refused as "not yet valid".
CLOCK_SKEW_SECONDS = 30
_TIMES = ("exp", "nbf", "iat")  # NumericDate claims (RFC 7519 2): a number, never a string
_ASYMMETRIC = {"RS256": "RSA", "ES256": "EC", "EdDSA": "OKP"}  # algorithm: the JWK key type it needs


@lru_cache(maxsize=4)
def _jwks(url: str) -> jwt.PyJWKClient:
    return jwt.PyJWKClient(url, cache_keys=True, lifespan=3600)


def user_from_token(token: str, settings: Settings) -> UUID:
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise AuthError("malformed bearer token") from None
    algorithm = header.get("alg")
    if not isinstance(algorithm, str):  # a list or an object (unhashable below): no token of ours
        raise AuthError("malformed bearer token: its alg is not a name")
    if algorithm == "HS256":
        if settings.supabase_jwt_secret is None:
            raise AuthError("HS256 tokens are not accepted: SUPABASE_JWT_SECRET is not set")
        key: object = settings.supabase_jwt_secret.get_secret_value()
    elif algorithm in _ASYMMETRIC and settings.supabase_jwks_url:
        try:
            signing_key = _jwks(settings.supabase_jwks_url).get_signing_key_from_jwt(token)
        except jwt.PyJWTError as exc:
            raise AuthError(f"no signing key for this token: {exc}") from None
        if signing_key.key_type != _ASYMMETRIC[algorithm]:
            # e.g. alg ES256 with the kid of an RSA key: the key cannot check this signature
            raise AuthError(f"the token's key ({signing_key.key_type}) does not sign {algorithm}")
        key = signing_key.key
    else:
        raise AuthError(f"tokens signed with {algorithm!r} are not accepted")
    required = ["exp", "sub", "aud"] + (["iss"] if settings.supabase_jwt_issuer else [])
    try:
        claims = jwt.decode(
            token,
            key,  # type: ignore[arg-type]
            algorithms=[algorithm],
            audience=settings.supabase_jwt_audience,
            issuer=settings.supabase_jwt_issuer or None,
            options={"require": required},
            leeway=CLOCK_SKEW_SECONDS,
        )
    except jwt.ExpiredSignatureError:
        raise AuthError("the token has expired") from None
    except jwt.InvalidAudienceError:
        raise AuthError("the token is for another audience") from None
    except jwt.InvalidIssuerError:
        raise AuthError("the token is from another issuer") from None
    except jwt.PyJWTError as exc:
        raise AuthError(f"invalid token: {exc}") from None
    except (TypeError, ValueError):  # what a key of the wrong kind raises, deep in cryptography
        raise AuthError("invalid token: its key cannot check this signature") from None
    for name in _TIMES:
        value = claims.get(name)
        if name in claims and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise AuthError(f"invalid token: its {name} is not a number")
    try:
        return UUID(str(claims["sub"]))
    except ValueError:
        raise AuthError("the token's subject is not a user id") from None
