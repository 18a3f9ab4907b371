"""Members and agent tokens of a project over HTTP (admins of the project, logged in: never a token)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.access import request_access
from contextweaver_site.http.validation import valid
from memory.access import Access
from memory.models import Role

from . import services
from .engine_settings import engine_settings, engine_settings_set

TAG = ["administration"]
ADMINS_ONLY = "Members and tokens are managed by the project's admins, logged in (API tokens may not)."


def admins(request, slug: str) -> Access:
    return request_access(request, slug, min_role=Role.ADMIN, agents=False, why=ADMINS_ONLY)


class MemberOutput(serializers.Serializer):
    user_id = serializers.IntegerField(source="user.pk")
    username = serializers.CharField(source="user.username")
    email = serializers.CharField(source="user.email")
    role = serializers.ChoiceField(choices=services.ROLES)


class MemberAddInput(serializers.Serializer):
    user = serializers.CharField(max_length=254, help_text="An existing user's username or e-mail.")
    role = serializers.ChoiceField(choices=services.ROLES, default=Role.VIEWER)


class AccountCreateInput(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    email = serializers.EmailField(required=False, allow_blank=True, default="")
    role = serializers.ChoiceField(choices=services.ROLES, default=Role.VIEWER)


class AccountCreatedOutput(MemberOutput):
    set_password_url = serializers.CharField(help_text="One-time link to choose a password: pass it on.")


class MemberRoleInput(serializers.Serializer):
    role = serializers.ChoiceField(choices=services.ROLES)


class TokenOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="The first characters, to tell tokens apart.")
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)


class TokenCreatedOutput(TokenOutput):
    token = serializers.CharField(help_text="The token itself: shown this once, never stored (only its hash).")


class TokenCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=services.TOKEN_NAME_MAX, help_text="Which agent uses it.")


class MemberListAddApi(APIView):
    @extend_schema(tags=TAG, responses=MemberOutput(many=True), summary="The project's members and their roles")
    def get(self, request, project_slug: str):
        access = admins(request, project_slug)
        return Response(MemberOutput(services.members(project=access.project), many=True).data)

    @extend_schema(tags=TAG, request=MemberAddInput, responses={201: MemberOutput},
                   summary="Make an existing user a member (viewer, curator or admin)")
    def post(self, request, project_slug: str):
        access = admins(request, project_slug)
        data = valid(MemberAddInput, request.data)
        membership = services.member_add(project=access.project, actor=access.actor, **data)
        return Response(MemberOutput(membership).data, status=status.HTTP_201_CREATED)


class AccountCreateApi(APIView):
    @extend_schema(tags=TAG, request=AccountCreateInput, responses={201: AccountCreatedOutput},
                   summary="Create an account, member of the project, with a one-time password link")
    def post(self, request, project_slug: str):
        access = admins(request, project_slug)
        data = valid(AccountCreateInput, request.data)
        account = services.account_create(project=access.project, actor=access.actor, **data)
        body = {**MemberOutput(account.membership).data, "set_password_url": request.build_absolute_uri(account.link)}
        return Response(body, status=status.HTTP_201_CREATED)


class MemberDetailApi(APIView):
    @extend_schema(tags=TAG, request=MemberRoleInput, responses=MemberOutput, summary="Change a member's role")
    def patch(self, request, project_slug: str, user_id: int):
        access = admins(request, project_slug)
        data = valid(MemberRoleInput, request.data)
        membership = services.member_role_set(project=access.project, actor=access.actor, user_id=user_id,
                                              role=data["role"])
        return Response(MemberOutput(membership).data)

    @extend_schema(tags=TAG, request=None, responses={204: OpenApiResponse(description="Removed")},
                   summary="Remove a member (their open pages of the project disconnect at once)")
    def delete(self, request, project_slug: str, user_id: int):
        access = admins(request, project_slug)
        services.member_remove(project=access.project, actor=access.actor, user_id=user_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenListCreateApi(APIView):
    @extend_schema(tags=TAG, responses=TokenOutput(many=True), summary="The project's agent tokens (never the token)")
    def get(self, request, project_slug: str):
        access = admins(request, project_slug)
        return Response(TokenOutput(services.tokens(project=access.project), many=True).data)

    @extend_schema(tags=TAG, request=TokenCreateInput, responses={201: TokenCreatedOutput},
                   summary="Create an agent token: the answer shows it once")
    def post(self, request, project_slug: str):
        access = admins(request, project_slug)
        data = valid(TokenCreateInput, request.data)
        issued = services.token_create(project=access.project, actor=access.actor, name=data["name"])
        body = {**TokenOutput(issued.token).data, "token": issued.raw}
        return Response(TokenCreatedOutput(body).data, status=status.HTTP_201_CREATED)


class TokenRevokeApi(APIView):
    @extend_schema(tags=TAG, request=None, responses=TokenOutput,
                   summary="Revoke an agent token: its next request is refused (401)")
    def delete(self, request, project_slug: str, token_id: int):
        access = admins(request, project_slug)
        return Response(TokenOutput(services.token_revoke(project=access.project, actor=access.actor,
                                                          token_id=token_id)).data)


class EngineSettingOutput(serializers.Serializer):
    key = serializers.CharField()
    value = serializers.JSONField()
    default = serializers.JSONField()
    overridden = serializers.BooleanField()
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    choices = serializers.ListField(child=serializers.CharField())


class EngineSettingsInput(serializers.Serializer):
    values = serializers.DictField(child=serializers.JSONField(allow_null=True),
                                   help_text='e.g. {"keep_threshold": 3.5, "recall_k": 12, "recall_preset": "hybrid"}; '
                                             "null or \"\" puts the default back.")


class EngineSettingsApi(APIView):
    @extend_schema(tags=TAG, responses=EngineSettingOutput(many=True), operation_id="engine_settings_list",
                   summary="The project's engine settings, with their defaults")
    def get(self, request, project_slug: str):
        access = admins(request, project_slug)
        return Response(EngineSettingOutput(engine_settings(access.project), many=True).data)

    @extend_schema(tags=TAG, request=EngineSettingsInput, responses=EngineSettingOutput(many=True),
                   summary="Change engine settings (all checked before any is written)")
    def patch(self, request, project_slug: str):
        access = admins(request, project_slug)
        data = valid(EngineSettingsInput, request.data)
        rows = engine_settings_set(project=access.project, actor=access.actor, values=data["values"])
        return Response(EngineSettingOutput(rows, many=True).data)
