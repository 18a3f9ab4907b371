"""Server-rendered pages (login required). The live graph view arrives with the frontend build."""
