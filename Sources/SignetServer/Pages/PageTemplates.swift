// The hosted pages' markup and style, as Mustache templates ({{ }} escapes HTML).

enum PageTemplates {
    /// The frame every page shares; `content` is the page's own partial.
    static let layout = """
        <!doctype html>
        <html lang="{{lang}}">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>{{title}} · Signet</title>
        <link rel="stylesheet" href="/assets/signet.css">
        </head>
        <body>
        <main class="card">
        <div class="brand" aria-hidden="true">◆ Signet</div>
        {{> content}}
        </main>
        <footer>Protected by Signet · <a href="{{issuer}}">{{issuerHost}}</a></footer>
        </body>
        </html>
        """

    static let login = """
        <h1>Sign in</h1>
        <p class="lead">to continue to <strong>{{clientName}}</strong></p>
        {{#error}}<div class="alert" role="alert">{{error}}</div>{{/error}}
        <form id="login-form" method="post" action="/login" autocomplete="on">
        <input type="hidden" name="authorization" value="{{authorization}}">
        <input type="hidden" name="csrf_token" value="{{csrfToken}}">
        <label for="username">Username</label>
        <input id="username" name="username" type="text" value="{{username}}" autocomplete="username" autocapitalize="none" autocorrect="off" spellcheck="false" required maxlength="128" {{^username}}autofocus{{/username}}>
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256" {{#username}}autofocus{{/username}}>
        <label class="check"><input type="checkbox" name="remember_me" value="on" {{#rememberMe}}checked{{/rememberMe}}> Remember my username on this device</label>
        <button type="submit">Sign in</button>
        </form>
        """

    static let sms = """
        <h1>Enter the code</h1>
        <p class="lead">We sent a {{digits}}-digit code to <strong>{{phoneHint}}</strong>.</p>
        {{#error}}<div class="alert" role="alert">{{error}}</div>{{/error}}
        <form id="sms-form" method="post" action="/login/sms">
        <input type="hidden" name="authorization" value="{{authorization}}">
        <input type="hidden" name="csrf_token" value="{{csrfToken}}">
        <label for="code">Code</label>
        <input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9]*" autocomplete="one-time-code" maxlength="{{digits}}" required autofocus>
        <button type="submit">Continue</button>
        </form>
        <form id="resend-form" method="post" action="/login/sms/resend">
        <input type="hidden" name="authorization" value="{{authorization}}">
        <input type="hidden" name="csrf_token" value="{{csrfToken}}">
        <button type="submit" class="secondary">Send a new code</button>
        </form>
        """

    static let continueAs = """
        <h1>Continue as {{username}}?</h1>
        <p class="lead">You are signed in. <strong>{{clientName}}</strong> asks to sign you in.</p>
        <form id="continue-form" method="post" action="/login/continue">
        <input type="hidden" name="authorization" value="{{authorization}}">
        <input type="hidden" name="csrf_token" value="{{csrfToken}}">
        <input type="hidden" name="choice" value="continue">
        <button type="submit">Continue as {{username}}</button>
        </form>
        <form id="switch-form" method="post" action="/login/continue">
        <input type="hidden" name="authorization" value="{{authorization}}">
        <input type="hidden" name="csrf_token" value="{{csrfToken}}">
        <input type="hidden" name="choice" value="switch">
        <button type="submit" class="secondary">Use another account</button>
        </form>
        """

    static let returnToApp = """
        {{#signedIn}}<h1>Signed in</h1>{{/signedIn}}{{#failed}}<h1>Sign-in not completed</h1>{{/failed}}
        <p class="lead">Go back to <strong>{{clientName}}</strong> to continue.</p>
        <a id="return-link" class="button" href="{{location}}">Return to {{clientName}}</a>
        """

    static let message = """
        <h1>{{heading}}</h1>
        <p class="lead">{{message}}</p>
        {{#detail}}<p class="detail"><code>{{detail}}</code></p>{{/detail}}
        """

    static let logoutConfirm = """
        <h1>Sign out?</h1>
        <p class="lead">{{#username}}You are signed in as <strong>{{username}}</strong>.{{/username}}{{^username}}Confirm to sign out.{{/username}}{{#forgetUser}} This device will also forget your username.{{/forgetUser}}</p>
        <form id="logout-form" method="post" action="/logout">
        <input type="hidden" name="csrf_token" value="{{csrfToken}}">
        {{#postLogoutRedirectURI}}<input type="hidden" name="post_logout_redirect_uri" value="{{postLogoutRedirectURI}}">{{/postLogoutRedirectURI}}
        {{#clientID}}<input type="hidden" name="client_id" value="{{clientID}}">{{/clientID}}
        {{#state}}<input type="hidden" name="state" value="{{state}}">{{/state}}
        {{#forgetUser}}<input type="hidden" name="forget_user" value="true">{{/forgetUser}}
        <button type="submit">Sign out</button>
        </form>
        """

    static let stylesheet = """
        :root { color-scheme: light dark; --accent: #2f5bea; --bg: #f4f5f8; --card: #fff; --text: #1b1d23; --muted: #5b6070; --border: #d5d8e0; --danger: #b3261e; }
        @media (prefers-color-scheme: dark) { :root { --bg: #111318; --card: #1b1e25; --text: #eceef3; --muted: #a3a8b6; --border: #363b47; --accent: #7d9bff; --danger: #ff8a80; } }
        * { box-sizing: border-box; }
        html, body { margin: 0; padding: 0; }
        body { min-height: 100vh; display: flex; flex-direction: column; align-items: center; justify-content: center; background: var(--bg); color: var(--text); font: 16px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; padding: 16px; }
        .card { width: 100%; max-width: 400px; background: var(--card); border: 1px solid var(--border); border-radius: 16px; padding: 32px 28px; box-shadow: 0 8px 24px rgba(0,0,0,.06); }
        .brand { font-weight: 600; color: var(--accent); letter-spacing: .02em; margin-bottom: 20px; }
        h1 { font-size: 1.6rem; margin: 0 0 4px; }
        .lead { color: var(--muted); margin: 0 0 24px; overflow-wrap: anywhere; }
        label { display: block; font-weight: 600; font-size: .9rem; margin: 16px 0 6px; }
        input[type=text], input[type=password] { width: 100%; font: inherit; padding: 12px 14px; border: 1px solid var(--border); border-radius: 10px; background: transparent; color: inherit; }
        input:focus { outline: 2px solid var(--accent); outline-offset: 1px; border-color: var(--accent); }
        button { width: 100%; margin-top: 24px; padding: 13px; font: inherit; font-weight: 600; color: #fff; background: var(--accent); border: 0; border-radius: 10px; cursor: pointer; }
        button:hover { filter: brightness(1.08); }
        .check { display: flex; gap: 8px; align-items: center; font-weight: 400; margin-top: 16px; }
        a.button { display: block; box-sizing: border-box; text-align: center; text-decoration: none; margin-top: 24px; padding: 13px; font-weight: 600; color: #fff; background: var(--accent); border-radius: 10px; }
        button.secondary { background: transparent; color: var(--accent); border: 1px solid var(--border); margin-top: 12px; }
        .alert { border: 1px solid var(--danger); color: var(--danger); border-radius: 10px; padding: 10px 14px; margin-bottom: 8px; }
        .detail { color: var(--muted); font-size: .85rem; overflow-wrap: anywhere; }
        footer { margin-top: 20px; font-size: .8rem; color: var(--muted); }
        footer a { color: inherit; }
        @media (max-width: 480px) { body { justify-content: flex-start; padding: 12px; } .card { padding: 24px 18px; border-radius: 12px; } }
        """
}
