"""Token checks (HS256 and JWKS keys served on loopback), the dev switch, and the progress ETA."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from pydantic import SecretStr

from app.api.auth import user_from_token
from app.api.errors import AuthError
from app.api.schemas import ProgressView
from app.core.config import load_settings
from app.core.errors import ConfigurationError
from app.models.document import Document, DocumentStatus
from app.models.ocr_chunk import ChunkProgress

USER = uuid.UUID("6f1d7a70-2c4e-4a0b-9d3e-0c5b1f2a3b4c")


def claims(**extra: object) -> dict[str, object]:
    return {"sub": str(USER), "aud": "authenticated", "exp": int(time.time()) + 600} | extra


@pytest.fixture
def jwks_server() -> Iterator[tuple[str, rsa.RSAPrivateKey]]:
    """A JWKS endpoint on loopback, as a Supabase project publishes its signing keys."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key())) | {
        "kid": "key-1",
        "alg": "RS256",
        "use": "sig",
    }
    body = json.dumps({"keys": [jwk]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/auth/v1/.well-known/jwks.json", key
    server.shutdown()
    server.server_close()


def test_hs256_with_the_project_secret() -> None:
    settings = load_settings(supabase_jwt_secret=SecretStr("s" * 40))
    assert user_from_token(jwt.encode(claims(), "s" * 40, algorithm="HS256"), settings) == USER
    with pytest.raises(AuthError, match="expired"):
        user_from_token(jwt.encode(claims(exp=int(time.time()) - 60), "s" * 40, algorithm="HS256"), settings)
    with pytest.raises(AuthError, match="audience"):
        user_from_token(jwt.encode(claims(aud="anon"), "s" * 40, algorithm="HS256"), settings)
    with pytest.raises(AuthError):
        user_from_token(jwt.encode(claims(), "t" * 40, algorithm="HS256"), settings)
    with pytest.raises(AuthError, match="not accepted"):
        user_from_token(jwt.encode(claims(), "s" * 40, algorithm="HS256"), load_settings())  # no secret set


def test_clocks_a_few_seconds_apart_are_allowed_for() -> None:
    """A token issued by a server whose clock is ahead (iat a second in the future) was refused as
    "not yet valid": 30 seconds of skew are allowed on iat, nbf and exp, no more."""
    settings = load_settings(supabase_jwt_secret=SecretStr("s" * 40))
    now = int(time.time())
    for ahead in (1, 5, 20):
        fresh = claims(iat=now + ahead, nbf=now + ahead)
        assert user_from_token(jwt.encode(fresh, "s" * 40, algorithm="HS256"), settings) == USER
    just_expired = claims(exp=now - 10)
    assert user_from_token(jwt.encode(just_expired, "s" * 40, algorithm="HS256"), settings) == USER
    with pytest.raises(AuthError, match="not yet valid"):
        user_from_token(jwt.encode(claims(nbf=now + 120), "s" * 40, algorithm="HS256"), settings)


def test_times_must_be_numbers() -> None:
    """RFC 7519's NumericDate: an exp of "9999999999" (a string) was taken as a number."""
    settings = load_settings(supabase_jwt_secret=SecretStr("s" * 40))
    for name, value in (("exp", "9999999999"), ("iat", str(int(time.time()))), ("exp", True)):
        token = jwt.encode(claims(**{name: value}), "s" * 40, algorithm="HS256")
        with pytest.raises(AuthError):
            user_from_token(token, settings)


def test_the_issuer_is_checked_when_one_is_set() -> None:
    issuer = "https://abcdefghijklmnop.supabase.co/auth/v1"
    settings = load_settings(supabase_jwt_secret=SecretStr("s" * 40), supabase_jwt_issuer=issuer)
    assert user_from_token(jwt.encode(claims(iss=issuer), "s" * 40, algorithm="HS256"), settings) == USER
    other_project = jwt.encode(claims(iss="https://qrstuvwxyzabcdef.supabase.co/auth/v1"), "s" * 40, "HS256")
    with pytest.raises(AuthError, match="another issuer"):
        user_from_token(other_project, settings)
    with pytest.raises(AuthError, match="iss"):
        user_from_token(jwt.encode(claims(), "s" * 40, algorithm="HS256"), settings)  # no iss at all
    unchecked = load_settings(supabase_jwt_secret=SecretStr("s" * 40))
    assert user_from_token(other_project, unchecked) == USER  # unset: any issuer, as before


def test_asymmetric_keys_from_jwks(jwks_server: tuple[str, rsa.RSAPrivateKey]) -> None:
    url, key = jwks_server
    settings = load_settings(supabase_jwks_url=url)
    good = jwt.encode(claims(), key, algorithm="RS256", headers={"kid": "key-1"})
    assert user_from_token(good, settings) == USER
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode(claims(), other, algorithm="RS256", headers={"kid": "key-1"})
    with pytest.raises(AuthError):
        user_from_token(forged, settings)
    unknown_kid = jwt.encode(claims(), key, algorithm="RS256", headers={"kid": "key-9"})
    with pytest.raises(AuthError, match="signing key"):
        user_from_token(unknown_kid, settings)
    with pytest.raises(AuthError, match="not accepted"):
        user_from_token(good, load_settings())  # RS256 without a JWKS URL


def test_auth_switch_is_refused_in_production() -> None:
    with pytest.raises(ConfigurationError, match="AUTH_DISABLED"):
        load_settings(auth_disabled=True, auth_dev_user_id=USER, environment="production")
    with pytest.raises(ConfigurationError, match="AUTH_DEV_USER_ID"):
        load_settings(auth_disabled=True)
    assert load_settings(auth_disabled=True, auth_dev_user_id=USER).auth_disabled


def _document(status: DocumentStatus) -> Document:
    now = datetime.now(UTC)
    return Document(
        id=uuid.uuid4(),
        matter_id=uuid.uuid4(),
        filename="a.pdf",
        page_count=100,
        file_sha256="0" * 64,
        ocr_status=status,
        engine="auto",
        created_at=now,
        updated_at=now,
    )


def test_eta_once_two_chunks_have_finished() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    document = _document(DocumentStatus.PROCESSING)
    one = ChunkProgress(
        document_id=document.id,
        total=10,
        completed=1,
        pending=9,
        pages_total=100,
        pages_completed=10,
        first_started_at=start,
        last_completed_at=start + timedelta(seconds=10),
    )
    assert ProgressView.of(document, one, start + timedelta(seconds=10)).eta_seconds is None
    two = one.model_copy(
        update={
            "completed": 2,
            "pending": 8,
            "pages_completed": 20,
            "last_completed_at": start + timedelta(seconds=20),
        }
    )
    # 20 pages in 20 s: 80 pages left at 1 page/s, 5 s already gone since the last chunk
    assert ProgressView.of(document, two, start + timedelta(seconds=25)).eta_seconds == 75.0
    finished = ProgressView.of(_document(DocumentStatus.COMPLETED), two, start)
    assert (finished.eta_seconds, finished.percent) == (None, 100.0)


def test_etag_changes_with_what_pollers_see() -> None:
    document = _document(DocumentStatus.PROCESSING)
    progress = ChunkProgress(document_id=document.id, total=10, pending=10, pages_total=100)
    now = datetime.now(UTC)
    first = ProgressView.of(document, progress, now).etag()
    assert ProgressView.of(document, progress, now + timedelta(seconds=9)).etag() == first
    moved = progress.model_copy(update={"pending": 9, "processing": 1})
    assert ProgressView.of(document, moved, now).etag() != first


@pytest.mark.parametrize("algorithm", ["ES256", "EdDSA"])
def test_a_header_that_does_not_match_the_key_is_401_not_a_crash(
    jwks_server: tuple[str, rsa.RSAPrivateKey], algorithm: str
) -> None:
    """alg ES256 (or EdDSA) with the RSA key's kid: PyJWT would hand the RSA key to the EC
    verifier, which raised TypeError (a 500 with a traceback, unauthenticated)."""
    url, _ = jwks_server
    signer = (
        ec.generate_private_key(ec.SECP256R1())
        if algorithm == "ES256"
        else ed25519.Ed25519PrivateKey.generate()
    )
    token = jwt.encode(claims(), signer, algorithm=algorithm, headers={"kid": "key-1"})
    with pytest.raises(AuthError, match="does not sign"):
        user_from_token(token, load_settings(supabase_jwks_url=url))
