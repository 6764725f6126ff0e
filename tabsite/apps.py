from django.contrib.admin.apps import AdminConfig


class TabAdminConfig(AdminConfig):
    """Django's admin, on a site that throttles wrong passwords as the game API does."""

    default_site = "tabsite.admin.TabAdminSite"
