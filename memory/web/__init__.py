"""Server-rendered pages (login required); the session page mounts the graph module built from frontend/."""
