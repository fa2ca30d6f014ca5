placeholder = None


def register(app):
    pass
