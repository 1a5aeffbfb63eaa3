"""An MCP client that is given nothing but the endpoint's URL and a public client's id, or its
own client ID metadata document's URL.

It is the official Python SDK's (the `mcp` package, pinned in requirements-mcp.txt), with its
OAuth client: the first call's 401 names the protected resource metadata, the metadata names the
issuer, and the client runs the authorization code grant with PKCE. The person's sign-in is the
local issuer's login form, submitted here without a browser (the redirect handler), and the
callback reads the code from the form's redirect, as a loopback listener would.

With CLIENT_ID "metadata-url" the client has no id of the issuer's: it serves its client ID
metadata document (CIMD) on a loopback port of its own and signs in with that URL as its
client_id, through the SDK's own CIMD path (the issuer's metadata says
client_id_metadata_document_supported, so the SDK uses the URL instead of registering). The SDK
takes only an https URL as client_metadata_url (its constructor refuses any other); the local
issuer takes http on loopback, where no certificate is needed, so the URL is set on the
provider's context after construction, past that one check, and everything after it is the
SDK's.

It asks for an approval and reads its outcome, then prints one JSON line of what it saw:
the tools, the request's and the outcome's structured content, how many sign-ins it took, and,
for a metadata URL, that URL and how often the issuer fetched it.
With SCENARIO "policy" it asks under the tenant's policy of issue_refund instead (the caller
sets the policy first): a large refund, the same naming its own approver, a small one, and the
small one's outcome.
Usage: python signin.py MCP_URL CLIENT_ID|metadata-url USER TENANT [SCENARIO]
"""

import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT = "http://127.0.0.1:8977/callback"  # never listened on: the handler reads the redirect


class Memory:
    """Token storage holding the preregistered public client (the issuer registers none), or
    nothing, for a client known by its metadata URL (the SDK stores what it makes of the URL)."""

    def __init__(self, client_id: str | None):
        self.tokens: OAuthToken | None = None
        self.client = None
        if client_id is not None:
            self.client = OAuthClientInformationFull(client_id=client_id, redirect_uris=[REDIRECT], token_endpoint_auth_method="none")

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


class Person:
    """Signs a person in at the issuer's login form when the client sends them there."""

    def __init__(self, user: str, tenant: str):
        self.user, self.tenant = user, tenant
        self.sign_ins = 0
        self.authorize_url = ""
        self.back = ""

    async def redirect(self, url: str) -> None:
        self.sign_ins += 1
        self.authorize_url = url
        parts = urlsplit(url)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        async with httpx2.AsyncClient(timeout=30) as http:
            form = await http.get(url)
            if form.status_code != 200:
                raise RuntimeError(f"the login form answered {form.status_code}")
            fields = {k: query[k] for k in ("client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method") if k in query}
            fields.update(user=self.user, tenant=self.tenant)
            login = await http.post(f"{parts.scheme}://{parts.netloc}{parts.path}", content=urlencode(fields),
                                    headers={"Content-Type": "application/x-www-form-urlencoded"})
        if login.status_code != 303 or not login.headers.get("location", "").startswith(REDIRECT):
            raise RuntimeError(f"the login answered {login.status_code} {login.headers.get('location')}")
        self.back = login.headers["location"]

    async def callback(self) -> AuthorizationCodeResult:
        q = parse_qs(urlsplit(self.back).query)
        return AuthorizationCodeResult(code=q["code"][0], state=q.get("state", [None])[0], iss=q.get("iss", [None])[0])


class MetadataDocument:
    """The client's own metadata document, served on a loopback port while the client runs:
    its client_id is the URL it is served at, its one redirect_uri the client's."""

    def __init__(self):
        document = self
        self.fetches = 0

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path != "/client.json":
                    self.send_error(404)
                    return
                document.fetches += 1
                body = json.dumps({"client_id": document.url, "client_name": "python-agent", "redirect_uris": [REDIRECT],
                                   "token_endpoint_auth_method": "none", "grant_types": ["authorization_code"],
                                   "response_types": ["code"]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/client.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


async def main(url: str, client_id: str, user: str, tenant: str, scenario: str = "ask") -> dict:
    person = Person(user, tenant)
    document = MetadataDocument() if client_id == "metadata-url" else None
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(redirect_uris=[REDIRECT], token_endpoint_auth_method="none", client_name="python-agent"),
        storage=Memory(None if document else client_id),
        redirect_handler=person.redirect,
        callback_handler=person.callback,
    )
    if document:
        # The SDK's constructor takes https alone; its flow then uses the URL as the client_id
        # once the issuer's metadata says client_id_metadata_document_supported.
        auth.context.client_metadata_url = document.url
    try:
        saw = await (ask_under_policy if scenario == "policy" else ask)(url, auth, person)
    finally:
        if document:
            document.close()
    if document:
        saw.update(clientId=document.url, fetches=document.fetches)
    return saw


async def ask(url: str, auth: OAuthClientProvider, person: Person) -> dict:
    """Signs in (on the first call's 401), asks bob for an approval and reads its outcome."""
    async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                tools = sorted(t.name for t in (await session.list_tools()).tools)
                asked = await session.call_tool("request_approval", {"title": "Refund order 1182", "approvers": ["bob"]})
                if asked.is_error:
                    raise RuntimeError(f"request_approval: {asked.content}")
                run, interrupt = asked.structured_content["runId"], asked.structured_content["interruptId"]
                outcome = await session.call_tool("get_outcome", {"runId": run, "interruptId": interrupt})
                if outcome.is_error:
                    raise RuntimeError(f"get_outcome: {outcome.content}")
    return {"tools": tools, "requested": asked.structured_content, "outcome": outcome.structured_content,
            "signIns": person.sign_ins, "authorize": person.authorize_url}


async def ask_under_policy(url: str, auth: OAuthClientProvider, person: Person) -> dict:
    """Signs in, then asks for issue_refund under the tenant's policy of it (which the caller
    set): a large refund, which waits for the policy's approvers; the same naming its own
    approver, which the host refuses; a small one, which a standing approval approves at once,
    and its outcome, with the approved call and its receipt."""
    refund = lambda order, cents: {"name": "issue_refund", "arguments": {"order": order, "amountCents": cents, "currency": "EUR"}}
    async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                large = await session.call_tool("request_approval", {"title": "Refund order 4471", "toolCall": refund("4471", 124000)})
                if large.is_error:
                    raise RuntimeError(f"request_approval, large: {large.content}")
                named = await session.call_tool("request_approval", {"title": "Refund order 4472", "approvers": ["bob"], "toolCall": refund("4472", 124000)})
                small = await session.call_tool("request_approval", {"title": "Refund order 4473", "toolCall": refund("4473", 1200)})
                if small.is_error:
                    raise RuntimeError(f"request_approval, small: {small.content}")
                outcome = await session.call_tool("get_outcome", {"runId": small.structured_content["runId"], "interruptId": small.structured_content["interruptId"]})
                if outcome.is_error:
                    raise RuntimeError(f"get_outcome: {outcome.content}")
    return {"large": large.structured_content, "named": {"isError": named.is_error, "text": " ".join(c.text for c in named.content if hasattr(c, "text"))},
            "small": small.structured_content, "outcome": outcome.structured_content, "signIns": person.sign_ins}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:6]))))
